//! Property tests: every view (slice, transpose/permute, reshape, broadcast, index) against a
//! naive reference that materialises the elements by index arithmetic.

use dlarray::{Array, Slice};
use proptest::prelude::*;

/// A naive array: row-major values and a shape.
#[derive(Clone, Debug)]
struct Naive {
    shape: Vec<usize>,
    data: Vec<i32>,
}

impl Naive {
    fn strides(&self) -> Vec<usize> {
        let mut s = vec![1; self.shape.len()];
        for k in (0..self.shape.len().saturating_sub(1)).rev() {
            s[k] = s[k + 1] * self.shape[k + 1];
        }
        s
    }
    /// Builds a new array of `shape` whose element at `idx` is `self[f(idx)]`.
    fn gather(&self, shape: Vec<usize>, f: impl Fn(&[usize]) -> Vec<usize>) -> Naive {
        let n: usize = shape.iter().product();
        let st = self.strides();
        let mut data = Vec::with_capacity(n);
        let mut idx = vec![0; shape.len()];
        for _ in 0..n {
            let src = f(&idx);
            data.push(self.data[src.iter().zip(&st).map(|(i, s)| i * s).sum::<usize>()]);
            for k in (0..shape.len()).rev() {
                idx[k] += 1;
                if idx[k] < shape[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
        Naive { shape, data }
    }
}

/// Python's slice resolution, written independently of the library's.
fn py_slice(n: usize, start: Option<isize>, stop: Option<isize>, step: isize) -> Vec<usize> {
    let n = n as isize;
    let mut out = Vec::new();
    if step > 0 {
        let fix = |v: isize| if v < 0 { (v + n).max(0) } else { v.min(n) };
        let (mut i, e) = (start.map_or(0, fix), stop.map_or(n, fix));
        while i < e {
            out.push(i as usize);
            i += step;
        }
    } else {
        let fix = |v: isize| if v < 0 { (v + n).max(-1) } else { v.min(n - 1) };
        let (mut i, e) = (start.map_or(n - 1, fix), stop.map_or(-1, fix));
        while i > e {
            out.push(i as usize);
            i += step;
        }
    }
    out
}

#[derive(Clone, Debug)]
enum View {
    Slice(Vec<(Option<isize>, Option<isize>, isize)>),
    Permute(Vec<usize>),
    Reshape(usize),
    Broadcast(usize),
    Index(usize, usize),
}

fn view_strategy() -> impl Strategy<Value = View> {
    let bound = prop::option::of(-6isize..7);
    let step = prop_oneof![1isize..4, -3isize..0];
    prop_oneof![
        prop::collection::vec((bound.clone(), bound, step), 0..4).prop_map(View::Slice),
        Just(())
            .prop_flat_map(|_| prop::collection::vec(any::<u32>(), 0..4))
            .prop_map(|keys| View::Permute(keys.iter().map(|&k| k as usize).collect())),
        (0usize..8).prop_map(View::Reshape),
        (1usize..4).prop_map(View::Broadcast),
        (0usize..4, 0usize..6).prop_map(|(a, i)| View::Index(a, i)),
    ]
}

/// Applies `v` to both; returns None when the view does not apply to this shape.
fn apply(a: &Array, n: &Naive, v: &View) -> Option<(Array, Naive)> {
    let nd = n.shape.len();
    match v {
        View::Slice(s) => {
            let s: Vec<_> = s.iter().take(nd).collect();
            let slices: Vec<Slice> = s.iter().map(|&&(b, e, st)| Slice::new(b, e, st)).collect();
            let picks: Vec<Vec<usize>> = (0..nd)
                .map(|k| match s.get(k) {
                    Some(&&(b, e, st)) => py_slice(n.shape[k], b, e, st),
                    None => (0..n.shape[k]).collect(),
                })
                .collect();
            let shape = picks.iter().map(Vec::len).collect();
            let out = n.gather(shape, |idx| {
                idx.iter().enumerate().map(|(k, &i)| picks[k][i]).collect()
            });
            Some((a.slice(&slices).expect("slice"), out))
        }
        View::Permute(keys) => {
            let mut perm: Vec<usize> = (0..nd).collect();
            // A permutation from the random keys (sorting by key).
            perm.sort_by_key(|&k| keys.get(k).copied().unwrap_or(k));
            let shape = perm.iter().map(|&p| n.shape[p]).collect();
            let out = n.gather(shape, |idx| {
                let mut src = vec![0; nd];
                for (k, &p) in perm.iter().enumerate() {
                    src[p] = idx[k];
                }
                src
            });
            Some((a.permute(&perm).expect("permute"), out))
        }
        View::Reshape(choice) => {
            let size: usize = n.shape.iter().product();
            let divisors: Vec<usize> = (1..=size.max(1))
                .filter(|d| size.is_multiple_of(*d))
                .collect();
            let d = divisors[choice % divisors.len()];
            let shape = if size == 0 {
                vec![0, 3]
            } else {
                vec![d, size / d]
            };
            let target: Vec<isize> = vec![shape[0] as isize, -1];
            if size == 0 {
                return None;
            }
            let out = Naive {
                shape,
                data: n.data.clone(),
            };
            Some((a.reshape(&target).expect("reshape"), out))
        }
        View::Broadcast(k) => {
            let mut shape = vec![*k];
            shape.extend(n.shape.iter().copied());
            let out = n.gather(shape, |idx| idx[1..].to_vec());
            Some((a.broadcast_to(&out.shape).expect("broadcast"), out))
        }
        View::Index(axis, i) => {
            if nd == 0 || n.shape[axis % nd] == 0 {
                return None;
            }
            let axis = axis % nd;
            let i = i % n.shape[axis];
            let mut shape = n.shape.clone();
            shape.remove(axis);
            let out = n.gather(shape, |idx| {
                let mut src = idx.to_vec();
                src.insert(axis, i);
                src
            });
            Some((a.index_axis(axis as isize, i).expect("index"), out))
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn views_match_naive_reference(
        shape in prop::collection::vec(0usize..5, 0..4),
        views in prop::collection::vec(view_strategy(), 1..5),
    ) {
        let size: usize = shape.iter().product();
        let data: Vec<i32> = (0..size as i32).collect();
        let mut arr = Array::from_vec(data.clone(), &shape).unwrap();
        let mut naive = Naive { shape, data };
        for v in &views {
            if let Some((a, n)) = apply(&arr, &naive, v) {
                arr = a;
                naive = n;
            }
            prop_assert_eq!(arr.shape(), naive.shape.as_slice());
            prop_assert_eq!(arr.to_vec::<i32>().unwrap(), naive.data.clone());
            // Ops read views with any strides: a copy through an op must agree too.
            let doubled = (&arr + &arr).unwrap().to_vec::<i32>().unwrap();
            prop_assert_eq!(doubled, naive.data.iter().map(|v| v * 2).collect::<Vec<_>>());
        }
    }
}

// ---- extreme sizes: the checked layout algebra against an i128/u128 reference ----

/// Axis lengths around the wrap points: 0, 1, 2, 2^31, 2^32, 2^62, 2^63 - 1, 2^63, usize::MAX.
fn extreme_dim() -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(0usize),
        Just(1),
        Just(2),
        Just(3),
        Just(1 << 31),
        Just(1 << 32),
        Just((1 << 32) + 1),
        Just(1 << 62),
        Just(isize::MAX as usize),
        Just(1 << 63),
        Just(usize::MAX),
        0usize..1000,
    ]
}

/// The reference: the product of the non-zero axes, exactly, if it is at most isize::MAX.
fn reference_size(shape: &[usize]) -> Option<usize> {
    let mut p: u128 = 1;
    for &d in shape.iter().filter(|&&d| d != 0) {
        p = p.checked_mul(d as u128)?;
        if p > isize::MAX as u128 {
            return None;
        }
    }
    Some(if shape.contains(&0) { 0 } else { p as usize })
}

/// Python's slice length, in i128 so no input can wrap.
fn reference_slice_len(n: usize, start: Option<isize>, stop: Option<isize>, step: isize) -> usize {
    let (n, step) = (n as i128, step as i128);
    let norm = |v: isize, lo: i128, hi: i128| {
        let v = v as i128;
        (if v < 0 { v + n } else { v }).clamp(lo, hi)
    };
    if step > 0 {
        let (b, e) = (
            start.map_or(0, |v| norm(v, 0, n)),
            stop.map_or(n, |v| norm(v, 0, n)),
        );
        if e > b {
            ((e - b + step - 1) / step) as usize
        } else {
            0
        }
    } else {
        let b = start.map_or(n - 1, |v| norm(v, -1, n - 1));
        let e = stop.map_or(-1, |v| norm(v, -1, n - 1));
        if b > e {
            ((b - e - step - 1) / -step) as usize
        } else {
            0
        }
    }
}

fn extreme_isize() -> impl Strategy<Value = isize> {
    prop_oneof![
        Just(isize::MIN),
        Just(isize::MIN + 1),
        Just(-(1isize << 32)),
        Just(-1),
        Just(0),
        Just(1),
        Just(1 << 32),
        Just(isize::MAX - 1),
        Just(isize::MAX),
        -30isize..30,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn sizes_are_checked_at_the_wrap_points(
        shape in prop::collection::vec(extreme_dim(), 0..5),
        extra in prop::collection::vec(extreme_dim(), 0..3),
    ) {
        use dlarray::Layout;
        let want = reference_size(&shape);
        prop_assert_eq!(dlarray::layout::checked_size(&shape).ok(), want);
        prop_assert_eq!(Layout::contiguous(&shape).ok().map(|l| l.size()), want);
        // Broadcasting a one-element layout to `shape` succeeds exactly when it fits.
        let one = Layout::contiguous(&vec![1; shape.len().min(1)]).unwrap();
        prop_assert_eq!(one.broadcast_to(&shape).ok().map(|l| l.size()), want);
        // broadcast_shapes of `shape` and a shape of ones with `extra` leading axes.
        let mut other = extra.clone();
        other.extend(std::iter::repeat_n(1, shape.len()));
        let mut joined = extra.clone();
        joined.extend(&shape);
        let got = dlarray::layout::broadcast_shapes("t", &shape, &other).ok();
        match reference_size(&joined) {
            Some(_) => prop_assert_eq!(got.as_deref(), Some(joined.as_slice())),
            None => prop_assert!(got.is_none()),
        }
        // Element and byte counts of a valid size.
        if let Some(n) = want {
            let bytes = (n as u128) * 16;
            prop_assert_eq!(
                dlarray::layout::checked_bytes(n, 16, "t").ok(),
                (bytes <= isize::MAX as u128).then_some(bytes as usize)
            );
        }
    }

    #[test]
    fn slices_never_wrap(
        n in prop_oneof![0usize..20, Just(1usize << 40)],
        start in prop::option::of(extreme_isize()),
        stop in prop::option::of(extreme_isize()),
        step in extreme_isize(),
    ) {
        use dlarray::Layout;
        let base = Layout::contiguous(&[n]).unwrap();
        let got = base.slice(&[Slice::new(start, stop, step)]);
        if step == 0 {
            prop_assert!(got.is_err());
            return Ok(());
        }
        let l = got.unwrap();
        prop_assert_eq!(l.shape()[0], reference_slice_len(n, start, stop, step));
        // Every offset the view reaches is an element of the base.
        if l.size() > 0 {
            let last = l.offset() as i128 + (l.shape()[0] as i128 - 1) * l.strides()[0] as i128;
            prop_assert!((0..n as i128).contains(&(l.offset() as i128)));
            prop_assert!((0..n as i128).contains(&last));
        }
    }

    #[test]
    fn raw_parts_reaching_past_isize_are_refused(
        d in extreme_dim(),
        stride in extreme_isize(),
        offset in prop_oneof![Just(0usize), Just(isize::MAX as usize), Just(usize::MAX), 0usize..100],
    ) {
        use dlarray::Layout;
        let got = Layout::from_parts(&[d], &[stride], offset, usize::MAX);
        let reach = (d as i128 - 1) * stride as i128;
        let (lo, hi) = (offset as i128 + reach.min(0), offset as i128 + reach.max(0));
        let ok = reference_size(&[d]).is_some()
            && (d == 0 || (lo >= 0 && hi <= isize::MAX as i128));
        prop_assert_eq!(got.is_ok(), ok, "d={} stride={} offset={}", d, stride, offset);
    }
}
