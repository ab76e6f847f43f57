//! tch-rs <-> dlarray <-> candle without copies, and on to every dlarray backend:
//!
//! ```sh
//! cargo run --example tch_interop --features tch,candle
//! ```
//!
//! A torch tensor becomes an array over the same memory, is computed on every device dlarray
//! finds (cpu, tpu, wgpu, cuda), crosses to candle and back, and returns to torch over the
//! same memory; the torch tensor owns the array it came from, so it may outlive it. On a GPU
//! machine a CUDA tensor goes to dlarray's `cuda` device in place, ordered on torch's stream.
use dlarray::{Array, Axes};
use tch::{Device as TDevice, Kind, Tensor};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // tch -> dlarray: a strided view with a storage offset, read in place.
    let t = Tensor::arange(24, (Kind::Float, TDevice::Cpu))
        .reshape([4, 6])
        .narrow(1, 1, 4);
    let a = Array::from_tch(&t)?;
    let same = a.unsafe_buffer_pointer()? == t.data_ptr() as usize;
    println!(
        "tch {:?} stride {:?} -> dlarray {:?}, same memory: {same}",
        t.size(),
        t.stride(),
        a.shape()
    );
    assert!(same);

    // The same work on every device dlarray has; each checked against torch's result.
    let want = t.square().sum(Kind::Float).double_value(&[]) as f32;
    for dev in dlarray::devices()? {
        let on = a.to_device(&dev)?;
        let got = (&on * &on)?.sum(Axes::All)?.to_vec::<f32>()?[0];
        println!("  sum(x*x) on {:<8} {got} (torch: {want})", dev.to_string());
        assert!((got - want).abs() <= 1e-3 * want.abs());
    }

    // dlarray -> candle -> dlarray -> tch. candle takes a copy here (torch's memory is not a
    // Vec it could own); from candle on, every step shares memory.
    let c = a.to_candle()?;
    let from_candle = Array::from_candle(&c)?;
    let back = from_candle.to_tch()?;
    println!(
        "tch -> dlarray -> candle {:?} -> dlarray -> tch {:?}",
        c.dims(),
        back.size()
    );
    assert!(back.equal(&t));

    // dlarray -> tch in place; the tensor outlives the array, and so do views of it.
    let y = (&a + 1.0)?;
    let p = y.unsafe_buffer_pointer()?;
    let ty = y.to_tch()?;
    drop(y);
    let row = ty.select(0, 3);
    drop(ty);
    println!(
        "dlarray -> tch, same memory: {}; a row outlives both: {:?}",
        row.data_ptr() as usize == p + 12 * 4,
        Vec::<f32>::try_from(&row)?
    );

    if tch::Cuda::is_available() {
        let g = Tensor::arange(1 << 20, (Kind::Float, TDevice::Cuda(0)));
        let ga = Array::from_tch(&g)?;
        let s = ga.sum(Axes::All)?.to_vec::<f32>()?[0];
        println!(
            "CUDA tensor -> dlarray {} in place, sum {s}",
            ga.devices()[0]
        );
        let gt = (&ga * 2.0)?.to_tch()?;
        assert_eq!(gt.device(), TDevice::Cuda(0));
    } else {
        println!("torch sees no CUDA device: the CUDA hand-off was not run");
    }
    println!("all tch interop checks passed");
    Ok(())
}
