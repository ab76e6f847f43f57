//! candle <-> dlarray without copies, and on to every dlarray backend and DLPack:
//!
//! ```sh
//! cargo run --example candle_interop --features candle
//! ```
//!
//! A candle CPU tensor becomes an array over the same memory, is computed on every device
//! dlarray finds (cpu, tpu, wgpu, cuda), and comes back to candle: the tensor it came from
//! without a copy, and a result as a new tensor. The array then leaves as DLPack, as a Python
//! consumer (`np.from_dlpack`, `torch.from_dlpack`, `jax.dlpack.from_dlpack`) receives it.
use candle_core::{Device as CDevice, Tensor};
use dlarray::{Array, Axes, DType, ExportOptions};

fn storage_address(t: &Tensor) -> usize {
    let (s, l) = t.storage_and_layout();
    let candle_core::Storage::Cpu(candle_core::CpuStorage::F32(v)) = &*s else {
        unreachable!("an f32 CPU tensor")
    };
    v.as_ptr() as usize + l.start_offset() * 4
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // candle -> dlarray: a transposed view, read in place.
    let t = Tensor::arange(0f32, 12.0, &CDevice::Cpu)?
        .reshape((3, 4))?
        .t()?;
    let a = Array::from_candle(&t)?;
    let same = a.unsafe_buffer_pointer()? == storage_address(&t);
    println!(
        "candle {:?} -> dlarray {:?} {}, same memory: {same}",
        t.dims(),
        a.shape(),
        a.dtype()
    );
    assert!(same);

    // The same work on every device dlarray has; each checked against candle's own result.
    let want: f32 = t.sqr()?.sum_all()?.to_scalar()?;
    for dev in dlarray::devices()? {
        let on = a.to_device(&dev)?;
        let got = (&on * &on)?.sum(Axes::All)?.to_vec::<f32>()?[0];
        println!(
            "  sum(x*x) on {:<8} {got} (candle: {want})",
            dev.to_string()
        );
        assert!((got - want).abs() <= 1e-3 * want.abs());
    }

    // dlarray -> DLPack: what a Python consumer of `__dlpack__` gets. candle's memory is
    // shared, so the array is exported read-only, which only DLPack 1.x can say.
    let d = a.to_dlpack_with(ExportOptions {
        max_version: Some((1, 0)),
        ..Default::default()
    })?;
    println!(
        "DLPack: versioned {}, read-only {}, copied {}",
        d.is_versioned(),
        d.is_read_only(),
        d.is_copied()
    );
    let again = Array::from_dlpack(d)?;
    assert_eq!(again.unsafe_buffer_pointer()?, storage_address(&t));
    drop(again);
    // dlarray -> candle: the tensor itself back (no copy), and a computed result (a copy:
    // pool memory is not a Vec candle could own).
    let y = (a.astype(DType::F64)? * 2.0)?.to_candle()?;
    println!("a computed array as candle {:?} {:?}", y.dims(), y.dtype());
    // A Vec given to dlarray on cpu goes on to candle without a copy.
    let v: Vec<f32> = vec![1.0, 2.0, 3.0];
    let p = v.as_ptr() as usize;
    let moved = Array::from_vec(v, &[3])?.into_candle()?;
    println!(
        "Vec -> dlarray -> candle, same memory: {}",
        storage_address(&moved) == p
    );

    // The array itself, no longer shared, goes back as the very tensor it came from.
    let back = a.into_candle()?;
    println!("back to candle: same tensor: {}", back.id() == t.id());
    assert_eq!(back.id(), t.id());
    println!("all candle interop checks passed");
    Ok(())
}
