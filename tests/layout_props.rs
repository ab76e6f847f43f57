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
            let divisors: Vec<usize> = (1..=size.max(1)).filter(|d| size % d == 0).collect();
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
