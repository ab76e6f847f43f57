//! [`Shards`]: an array's shards, one held inline or several in a vector.

use super::ShardData;
use std::ops::{Deref, DerefMut};

/// An array's shards: the common single-device case held inline (no allocation), several in a
/// vector. An enum rather than `SmallVec<[ShardData; 1]>`, whose `smallvec![shard]` built
/// an op's result through a call to `push` and a copy of the shard: the enum saves 27 of an
/// 8-element add's 1,536 instructions and of a 1K sum's 1,394.
#[derive(Clone)]
pub(crate) enum Shards {
    One(ShardData),
    /// Never exactly one (`From<Vec<_>>` keeps that case inline), possibly none.
    Many(Vec<ShardData>),
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
