use super::{Operand, Strided, gemm};
use crate::backends::host::HostBackend;

fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

fn backend(threads: usize) -> HostBackend {
    HostBackend::for_tests("gemm-test", threads)
}

/// How an operand is laid out in its storage.
#[derive(Clone, Copy, Debug)]
enum Form {
    RowMajor,
    /// Stored transposed (column-major).
    Transposed,
    /// Row-major, rows read last to first (negative row stride).
    Reversed,
    /// Every row the same storage row (row stride 0).
    BroadcastRows,
}

/// An element type under test, made from small integers.
trait Elem: Operand + PartialEq + std::fmt::Debug {
    fn of(v: f64) -> Self;
}
impl Elem for f32 {
    fn of(v: f64) -> Self {
        v as f32
    }
}
impl Elem for f64 {
    fn of(v: f64) -> Self {
        v
    }
}
impl Elem for half::f16 {
    fn of(v: f64) -> Self {
        half::f16::from_f64(v)
    }
}
impl Elem for half::bf16 {
    fn of(v: f64) -> Self {
        half::bf16::from_f64(v)
    }
}

/// Storage for a `rows x cols` operand of `form` with values from `f`, and its strides view.
fn operand<T: Elem>(
    rows: usize,
    cols: usize,
    form: Form,
    f: impl Fn(usize, usize) -> i16,
) -> (Vec<T>, isize, isize, isize) {
    // (storage, offset of element (0, 0), row stride, column stride)
    let (r, c) = (rows as isize, cols as isize);
    match form {
        Form::RowMajor => {
            let v = (0..rows * cols)
                .map(|i| T::of(f64::from(f(i / cols, i % cols))))
                .collect();
            (v, 0, c, 1)
        }
        Form::Transposed => {
            let v = (0..rows * cols)
                .map(|i| T::of(f64::from(f(i % rows, i / rows))))
                .collect();
            (v, 0, 1, r)
        }
        Form::Reversed => {
            let v = (0..rows * cols)
                .map(|i| T::of(f64::from(f(rows - 1 - i / cols, i % cols))))
                .collect();
            (v, (r - 1) * c, -c, 1)
        }
        Form::BroadcastRows => {
            let v = (0..cols).map(|j| T::of(f64::from(f(0, j)))).collect();
            (v, 0, 0, 1)
        }
    }
}

/// Checks `gemm` against a plain triple loop on small integers, whose products and sums are
/// exact in f32 and f64 whatever the order: the result must be equal, not close. float16
/// and bfloat16 results are the exact sum rounded once.
fn check<T: Elem>(
    dev: Option<&super::HostDevice>,
    m: usize,
    n: usize,
    k: usize,
    fa: Form,
    fb: Form,
) {
    // Row-broadcast operands repeat row 0, so the values must not depend on the row there.
    let va = move |i: usize, p: usize| {
        let i = if matches!(fa, Form::BroadcastRows) {
            0
        } else {
            i
        };
        ((i * 7 + p * 3) % 11) as i16 - 5
    };
    let vb = move |p: usize, j: usize| {
        let p = if matches!(fb, Form::BroadcastRows) {
            0
        } else {
            p
        };
        ((p * 5 + j * 13) % 9) as i16 - 4
    };
    let (sa, oa, ars, acs) = operand::<T>(m, k, fa, va);
    let (sb, ob, brs, bcs) = operand::<T>(k, n, fb, vb);
    // C with a wider row than n, and a sentinel around the tile that must survive.
    let ldc = n + 3;
    let sentinel = T::of(1234.0);
    let mut c = vec![sentinel; m * ldc];
    // SAFETY: the processor has AVX2 and FMA (the callers check); the offsets and strides
    // address only elements of `sa` and `sb`; `c` holds m rows of ldc >= n elements.
    unsafe {
        gemm(
            dev,
            m,
            n,
            k,
            Strided {
                ptr: sa.as_ptr().offset(oa),
                rs: ars,
                cs: acs,
            },
            Strided {
                ptr: sb.as_ptr().offset(ob),
                rs: brs,
                cs: bcs,
            },
            c.as_mut_ptr(),
            ldc,
        )
    };
    for i in 0..m {
        for j in 0..ldc {
            let want = if j < n {
                T::of(
                    (0..k)
                        .map(|p| f64::from(va(i, p)) * f64::from(vb(p, j)))
                        .sum(),
                )
            } else {
                sentinel
            };
            assert_eq!(
                c[i * ldc + j],
                want,
                "{m}x{n}x{k} {fa:?} {fb:?}: ({i}, {j})"
            );
        }
    }
}

const FORMS: [Form; 4] = [
    Form::RowMajor,
    Form::Transposed,
    Form::Reversed,
    Form::BroadcastRows,
];

#[test]
fn products_equal_the_triple_loop_for_every_edge_and_layout() {
    if !has_avx2() {
        eprintln!("skipped: this processor has no AVX2 + FMA, so the kernel cannot run");
        return;
    }
    // Tiles cut at every edge: one row or column, a tile minus one, plus one, and a depth
    // over one block (KC = 256) by an odd amount.
    let shapes = [
        (1, 1, 1),
        (6, 16, 1),
        (5, 15, 3),
        (7, 17, 9),
        (13, 33, 257),
        (12, 8, 5),
    ];
    for (m, n, k) in shapes {
        for fa in FORMS {
            for fb in FORMS {
                check::<f32>(None, m, n, k, fa, fb);
                check::<f64>(None, m, n, k, fa, fb);
                check::<half::bf16>(None, m, n, k, fa, fb);
                if std::arch::is_x86_feature_detected!("f16c") {
                    check::<half::f16>(None, m, n, k, fa, fb);
                }
            }
        }
    }
}

#[test]
fn threads_split_rows_and_columns_without_overlap() {
    if !has_avx2() {
        eprintln!("skipped: this processor has no AVX2 + FMA, so the kernel cannot run");
        return;
    }
    let be = backend(3);
    let dev = Some(&be.devices[0]);
    // Many row blocks (rows over one A block), few rows and many columns (the columns are
    // split), and a product of several depth blocks.
    // (6, 16, 10): one row block and one column panel for three threads, so two of the
    // column splits are empty.
    for (m, n, k) in [(301, 45, 70), (4, 200, 31), (50, 70, 600), (6, 16, 10)] {
        check::<f32>(dev, m, n, k, Form::RowMajor, Form::RowMajor);
        check::<f64>(dev, m, n, k, Form::Transposed, Form::RowMajor);
        check::<half::bf16>(dev, m, n, k, Form::RowMajor, Form::Transposed);
    }
}

#[test]
fn depths_over_one_packed_group_accumulate() {
    if !has_avx2() {
        eprintln!("skipped: this processor has no AVX2 + FMA, so the kernel cannot run");
        return;
    }
    // Deeper than GROUP_DEPTH (4096): B is packed in two groups, C accumulates across them.
    let be = backend(2);
    for dev in [None, Some(&be.devices[0])] {
        check::<f32>(dev, 20, 17, 4500, Form::RowMajor, Form::Transposed);
        check::<f64>(dev, 7, 33, 4500, Form::Reversed, Form::RowMajor);
    }
}

#[test]
fn rounding_matches_a_fused_sum_in_order() {
    if !has_avx2() {
        eprintln!("skipped: this processor has no AVX2 + FMA, so the kernel cannot run");
        return;
    }
    // Values whose products are not exact: each element is the depth-ordered chain of
    // fused multiply-adds, the same bits on every run and thread count.
    let (m, n, k) = (9, 20, 300);
    let a: Vec<f32> = (0..m * k).map(|i| ((i as f32) * 0.37).sin()).collect();
    let b: Vec<f32> = (0..k * n).map(|i| ((i as f32) * 0.11).cos()).collect();
    let run = |dev: Option<&super::HostDevice>| {
        let mut c = vec![0.0f32; m * n];
        // SAFETY: AVX2 and FMA checked; a and b are m x k and k x n row-major; c is m x n.
        unsafe {
            gemm(
                dev,
                m,
                n,
                k,
                Strided {
                    ptr: a.as_ptr(),
                    rs: k as isize,
                    cs: 1,
                },
                Strided {
                    ptr: b.as_ptr(),
                    rs: n as isize,
                    cs: 1,
                },
                c.as_mut_ptr(),
                n,
            )
        };
        c
    };
    let one = run(None);
    let be = backend(2);
    assert_eq!(one, run(Some(&be.devices[0])));
    for i in 0..m {
        for j in 0..n {
            // One depth block (300 > 256: two blocks of 150), summed in order per block.
            let block = |ps: std::ops::Range<usize>| {
                ps.fold(0.0f32, |acc, p| a[i * k + p].mul_add(b[p * n + j], acc))
            };
            let want = block(0..150) + block(150..300);
            assert_eq!(one[i * n + j], want, "({i}, {j})");
        }
    }
}
