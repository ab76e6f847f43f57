//! Unit tests of the layout algebra (property tests at extreme sizes: tests/layout_props.rs).

use super::*;

#[test]
fn slice_semantics_match_python() {
    let l = Layout::contiguous(&[10]).unwrap();
    let cases: [(Slice, Vec<usize>); 6] = [
        (Slice::with_step(2, 8, 3), vec![2, 5]),
        (Slice::reversed(), (0..10).rev().collect()),
        (Slice::new(Some(-3), None, 1), vec![7, 8, 9]),
        (Slice::new(Some(8), Some(2), -2), vec![8, 6, 4]),
        (Slice::new(Some(20), None, 1), vec![]),
        (Slice::new(None, Some(-20), -1), (0..10).rev().collect()),
    ];
    for (s, want) in cases {
        let v = l.slice(&[s]).unwrap();
        let got: Vec<usize> = (0..v.size()).map(|i| v.offset_of(&[i])).collect();
        assert_eq!(got, want, "{s:?}");
    }
    assert!(l.slice(&[Slice::with_step(0, 1, 0)]).is_err());
}

#[test]
fn reshape_of_transposed_needs_copy() {
    let t = Layout::contiguous(&[2, 3]).unwrap().transpose();
    assert_eq!(t.reshape(&[6]).unwrap(), None);
    assert!(t.reshape(&[3, 2, 1]).unwrap().is_some());
    assert!(t.reshape(&[5]).is_err());
}

#[test]
fn from_parts_rejects_out_of_bounds() {
    assert!(Layout::from_parts(&[3], &[2], 0, 5).is_ok());
    assert!(Layout::from_parts(&[3], &[2], 0, 4).is_err());
    assert!(Layout::from_parts(&[3], &[-1], 1, 10).is_err());
    assert!(Layout::from_parts(&[3], &[-1], 2, 10).is_ok());
    assert!(Layout::from_parts(&[0], &[-100], 0, 0).is_ok());
    assert!(Layout::from_parts(&[usize::MAX, 2], &[1, 1], 0, 4).is_err());
}

#[test]
fn extreme_slices_match_python() {
    let l = Layout::contiguous(&[10]).unwrap();
    let offsets = |s: Slice| {
        let v = l.slice(&[s]).unwrap();
        (0..v.size()).map(|i| v.offset_of(&[i])).collect::<Vec<_>>()
    };
    // a[0:10:sys.maxsize] == [a[0]]; a[::-(2**63)] == [a[9]]
    assert_eq!(offsets(Slice::new(Some(0), Some(10), isize::MAX)), vec![0]);
    assert_eq!(offsets(Slice::new(None, None, isize::MIN)), vec![9]);
    assert_eq!(
        offsets(Slice::new(Some(isize::MIN), Some(isize::MAX), 1)).len(),
        10
    );
    assert_eq!(
        offsets(Slice::new(Some(isize::MAX), Some(isize::MIN), -1)).len(),
        10
    );
    assert_eq!(
        offsets(Slice::new(Some(isize::MIN), None, isize::MIN)),
        Vec::<usize>::new()
    );
    // A big stride times a big step on a one-element result keeps the old stride.
    let big = Layout::from_parts(&[2], &[1 << 40], 0, (1 << 40) + 1).unwrap();
    let one = big.slice(&[Slice::new(None, None, 1 << 40)]).unwrap();
    assert_eq!((one.shape(), one.offset()), (&[1usize][..], 0));
}

#[test]
fn sizes_beyond_isize_are_errors() {
    assert!(checked_size(&[1 << 62, 4]).is_err());
    assert!(checked_size(&[1 << 32, 1 << 32]).is_err());
    assert!(checked_size(&[0, 1 << 62, 1 << 62]).is_err());
    assert_eq!(checked_size(&[0, 1 << 62]).unwrap(), 0);
    assert_eq!(
        checked_size(&[isize::MAX as usize]).unwrap(),
        isize::MAX as usize
    );
    assert!(checked_size(&[isize::MAX as usize, 2]).is_err());
    let one = Layout::contiguous(&[1, 1]).unwrap();
    assert!(one.broadcast_to(&[1 << 62, 4]).is_err());
    assert!(one.broadcast_to(&[1 << 32, 1 << 32]).is_err());
    assert!(one.broadcast_to(&[1 << 32, 1]).is_ok());
    assert!(Layout::contiguous(&[usize::MAX]).is_err());
    assert!(broadcast_shapes("add", &[1 << 32, 1], &[1, 1 << 32]).is_err());
    assert!(checked_bytes(1 << 62, 4, "cpu:0").is_err());
    // Offsets past isize::MAX are refused even where the buffer length would allow them.
    assert!(Layout::from_parts(&[2], &[isize::MAX], 1, usize::MAX).is_err());
    assert!(one.with_offset(usize::MAX).is_err());
    assert!(one.select(0, 1).is_err());
}

/// Every element's offset in row-major order of the index.
fn offsets(l: &Layout) -> Vec<usize> {
    let n: usize = l.shape().iter().product();
    let mut idx = vec![0usize; l.ndim()];
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(l.offset_of(&idx));
        for k in (0..idx.len()).rev() {
            idx[k] += 1;
            if idx[k] < l.shape()[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

/// The cached size and contiguity against their definitions: the product of the shape, and
/// offsets that run `offset, offset + 1, ..` in row-major order (an empty layout counts).
fn assert_cache_holds(l: &Layout, what: &str) {
    let offs = offsets(l);
    assert_eq!(l.size(), offs.len(), "{what}: size of {l:?}");
    let row_major = offs.iter().enumerate().all(|(i, &o)| o == l.offset() + i);
    assert_eq!(l.is_contiguous(), row_major, "{what}: contiguity of {l:?}");
}

#[test]
fn cached_size_and_contiguity_hold_after_every_constructor() {
    for shape in [
        &[][..],
        &[0],
        &[1],
        &[5],
        &[2, 3],
        &[3, 1, 4],
        &[2, 0, 3],
        &[1, 1],
    ] {
        let base = Layout::contiguous(shape).unwrap();
        assert_cache_holds(&base, "contiguous");
        assert_cache_holds(&Layout::contiguous_valid(shape), "contiguous_valid");
        assert_cache_holds(&base.transpose(), "transpose");
        let rev: Vec<usize> = (0..shape.len()).rev().collect();
        assert_cache_holds(&base.permute(&rev).unwrap(), "permute");
        let mut wide = vec![2];
        wide.extend_from_slice(shape);
        assert_cache_holds(&base.broadcast_to(&wide).unwrap(), "broadcast_to");
        assert_cache_holds(&base.with_offset(3).unwrap(), "with_offset");
        if let Some(r) = base.transpose().reshape(&[base.size()]).unwrap() {
            assert_cache_holds(&r, "reshape");
        }
        for s in [
            Slice::with_step(0, 2, 1),
            Slice::reversed(),
            Slice::with_step(1, 9, 2),
        ] {
            if !shape.is_empty() {
                let v = base.slice(&[s]).unwrap();
                assert_cache_holds(&v, "slice");
                assert_cache_holds(&v.transpose(), "slice then transpose");
                if v.shape()[0] > 0 {
                    assert_cache_holds(&v.select(0, 0).unwrap(), "select");
                }
            }
        }
        if shape.len() > 1 && shape[1] > 0 {
            assert_cache_holds(&base.select(1, 0).unwrap(), "select of an inner axis");
        }
    }
    // Strides from outside, contiguous or not, with size-1 axes whose stride is anything.
    for (shape, strides) in [
        (&[2, 3][..], &[3, 1][..]),
        (&[2, 3], &[1, 2]),
        (&[1, 4], &[99, 1]),
        (&[4, 1], &[1, 7]),
        (&[3], &[0]),
        (&[2, 2], &[2, -1]),
    ] {
        let off = 1;
        let l = Layout::from_parts(shape, strides, off, 64).unwrap();
        assert_cache_holds(&l, "from_parts");
    }
}

#[test]
fn contiguous_strides_are_the_suffix_products_at_every_rank() {
    // The unrolled path (up to 4 axes) against the plain definition, zero extents counted as
    // 1 (as NumPy's strides of an empty array), and the general path past 4 axes.
    let shapes: [&[usize]; 9] = [
        &[],
        &[7],
        &[0],
        &[2, 3],
        &[3, 0, 5],
        &[2, 3, 4],
        &[5, 1, 2, 3],
        &[2, 3, 4, 5, 6],
        &[1 << 20, 1 << 20, 1 << 20, 1 << 20],
    ];
    for shape in shapes {
        let want: Vec<isize> = (0..shape.len())
            .map(|k| {
                shape[k + 1..]
                    .iter()
                    .fold(1isize, |a, &d| a.saturating_mul(d.max(1) as isize))
            })
            .collect();
        assert_eq!(contiguous_strides(shape).as_slice(), &want[..], "{shape:?}");
        if checked_size(shape).is_err() {
            continue;
        }
        // Written in place (an op's result), the same layout as built whole.
        let whole = Layout::contiguous_valid(shape);
        let mut place = std::mem::MaybeUninit::<Layout>::uninit();
        // SAFETY: `place` is valid for writes and holds nothing; every field is written.
        let written = unsafe {
            Layout::write_contiguous_valid(place.as_mut_ptr(), shape);
            place.assume_init()
        };
        assert_eq!(written.shape, whole.shape, "{shape:?}");
        assert_eq!(written.strides, whole.strides, "{shape:?}");
        assert_eq!(
            (written.offset, written.size, written.contiguous),
            (whole.offset, whole.size, whole.contiguous),
            "{shape:?}"
        );
    }
}
