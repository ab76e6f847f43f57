//! [`Shards`]: an array's shards, one held inline or several in a vector.

use super::ShardData;
use std::ops::{Deref, DerefMut};

/// An array's shards: the common single-device case held inline (no allocation), several in a
/// vector. An enum rather than `SmallVec<[ShardData; 1]>`, whose `smallvec![shard]` built
/// an op's result through a call to `push` and a copy of the shard: the enum saves 27 of an
/// 8-element add's 1,536 instructions and of a 1K sum's 1,394.
///
/// `repr(u8)` gives the enum a defined layout (the Reference's "primitive representation of
/// enums with fields": a union of `repr(C)` structs, each its variant's tag followed by its
/// fields), so that [`write_one`](Shards::write_one) can build `One` in place.
#[derive(Clone)]
#[repr(u8)]
pub(crate) enum Shards {
    One(ShardData) = ONE,
    /// Never exactly one (`From<Vec<_>>` keeps that case inline), possibly none.
    Many(Vec<ShardData>) = 1,
}

/// `Shards::One`'s tag.
const ONE: u8 = 0;

/// `Shards::One` as `repr(u8)` lays it out: the tag, then the shard.
#[repr(C)]
struct OneRepr {
    tag: u8,
    shard: ShardData,
}

impl Shards {
    /// Makes `*p` a `Shards::One` whose shard the caller then writes, field by field, through
    /// the pointer returned (see `Inner::write_single`: a shard built whole and moved in
    /// went through the stack).
    ///
    /// # Safety
    /// `p` is valid for writes and aligned; `*p` is a valid `Shards` only once every field of
    /// the returned shard is written.
    #[inline(always)]
    pub(crate) unsafe fn write_one(p: *mut Shards) -> *mut ShardData {
        let one = p.cast::<OneRepr>();
        // SAFETY: per the contract, and `OneRepr` is `One`'s layout under `repr(u8)`.
        unsafe {
            std::ptr::addr_of_mut!((*one).tag).write(ONE);
            std::ptr::addr_of_mut!((*one).shard)
        }
    }
}

impl Deref for Shards {
    type Target = [ShardData];
    #[inline(always)]
    fn deref(&self) -> &[ShardData] {
        match self {
            Shards::One(s) => std::slice::from_ref(s),
            Shards::Many(v) => v,
        }
    }
}

impl DerefMut for Shards {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [ShardData] {
        match self {
            Shards::One(s) => std::slice::from_mut(s),
            Shards::Many(v) => v,
        }
    }
}

impl From<Vec<ShardData>> for Shards {
    fn from(mut v: Vec<ShardData>) -> Shards {
        match (v.pop(), v.is_empty()) {
            (Some(s), true) => Shards::One(s),
            (Some(s), false) => {
                v.push(s);
                Shards::Many(v)
            }
            (None, _) => Shards::Many(v),
        }
    }
}

impl FromIterator<ShardData> for Shards {
    fn from_iter<I: IntoIterator<Item = ShardData>>(iter: I) -> Shards {
        Shards::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl<'a> IntoIterator for &'a Shards {
    type Item = &'a ShardData;
    type IntoIter = std::slice::Iter<'a, ShardData>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::Shards;
    use crate::array::Array;

    #[test]
    fn one_shard_is_held_inline_and_several_keep_their_order() {
        let a = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
        let b = Array::from_slice(&[1i32, 2, 3], &[3]).unwrap();
        let (sa, sb) = (a.shard_data()[0].clone(), b.shard_data()[0].clone());

        // Built in place, it is the same `One`.
        let mut place = std::mem::MaybeUninit::<Shards>::uninit();
        // SAFETY: `place` is valid for writes; the shard is written whole before it is read.
        let built = unsafe {
            Shards::write_one(place.as_mut_ptr()).write(sb.clone());
            place.assume_init()
        };
        assert!(matches!(&built, Shards::One(s) if s.layout.shape() == [3]));
        assert_eq!(built.len(), 1);
        drop(built);

        let one = Shards::from(vec![sa.clone()]);
        assert!(matches!(one, Shards::One(_)));
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].layout.shape(), &[2]);

        let two: Shards = [sa, sb].into_iter().collect();
        assert!(matches!(two, Shards::Many(_)));
        let shapes: Vec<&[usize]> = two.iter().map(|s| s.layout.shape()).collect();
        assert_eq!(shapes, [&[2][..], &[3][..]]);

        let none = Shards::from(Vec::new());
        assert!(none.is_empty());
    }
}
