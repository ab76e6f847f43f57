//! Times the stages of a wgpu add (upload, kernel, readback) on the first wgpu device.
fn main() -> dlarray::Result<()> {
    use std::time::Instant;
    let dev = dlarray::devices()?
        .into_iter()
        .find(|d| d.platform() == "wgpu")
        .ok_or_else(|| dlarray::Error::UnknownDevice("no wgpu device".into()))?;
    let n = 1 << 24;
    let xs = vec![1.5f32; n];
    let t = Instant::now();
    let a = dlarray::Array::from_slice_on(&xs, &[n], &dev)?;
    a.block_until_ready()?;
    println!("upload 64 MiB: {:?}", t.elapsed());
    for _ in 0..3 {
        let t = Instant::now();
        let c = (&a + &a)?;
        let enq = t.elapsed();
        c.block_until_ready()?;
        println!("add: enqueue {enq:?}, done {:?}", t.elapsed());
    }
    let t = Instant::now();
    let v = a.to_vec::<f32>()?;
    println!("readback: {:?} ({})", t.elapsed(), v.len());
    Ok(())
}
