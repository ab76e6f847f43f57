use dlarray::*;
fn main() -> Result<()> {
    for d in devices()? {
        println!("{d} {} {:?}", d.platform(), d.memory_kinds());
    }
    let a = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    let b = Array::from_vec(vec![10.0f32, 20.0, 30.0], &[3])?;
    println!("{}", (&a + &b)?);
    println!("{}", a.t()?);
    println!("{}", a.matmul(&a.t()?)?);
    println!("{}", a.sum(0)?);
    println!("{}", a.sum(Axes::All)?);
    println!("{}", a.mean(1)?);
    println!("{}", a.max(1)?);
    println!("{}", a.slice(&[Slice::full(), Slice::reversed()])?);
    let tpus: Vec<Device> = devices()?
        .into_iter()
        .filter(|d| d.platform() == "tpu")
        .collect();
    let x = Array::arange(0.0, 10.0, 1.0, DType::I32)?;
    let xs = x.device_put(&Sharding::split(tpus.clone(), 0)?)?;
    for s in xs.addressable_shards() {
        println!("{} {:?} {}", s.device(), s.index(), s.data());
    }
    let y = (&xs * &xs)?;
    println!("{:?} {}", y.sharding(), y);
    println!("{}", y.sum(Axes::All)?);
    let e = Array::zeros(&[1 << 40], DType::U8);
    println!("{:?}", e.err());
    Ok(())
}
