use crossover::*;
use std::time::Instant;
fn med(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}
fn main() -> Result<()> {
    let a = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    println!("{:?}", a.mul(&a)?.add(1.0)?.to_vec::<f32>()?);
    println!("T {:?}", a.transpose()?.to_vec::<f32>()?);
    println!(
        "sum0 {:?} sum1 {:?} all {:?}",
        a.sum(Some(&[0]), false)?.to_vec::<f32>()?,
        a.sum(Some(&[1]), false)?.to_vec::<f32>()?,
        a.sum(None, false)?.item()?
    );
    println!(
        "std {:?} argmax {:?}",
        a.std(None, false, 0)?.item()?,
        a.argmax(Some(1))?.to_vec::<i64>()?
    );
    let mut rng = Generator::new(0);
    let n = 3162;
    let x = rng.uniform(&[n, n], DType::F32)?;
    x.eval()?;
    let y = rng.uniform(&[n, n], DType::F32)?;
    y.eval()?;
    let mut ts = vec![];
    for _ in 0..10 {
        let t = Instant::now();
        let z = x.mul(&y)?.add(&x.sin()?)?.add(&y.cos()?)?;
        z.eval()?;
        ts.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!("elementwise 10M: {:.2} ms", med(ts));
    let big = rng.uniform(&[10000, 10000], DType::F32)?;
    big.eval()?;
    for name in ["sum", "mean", "std"] {
        let mut ts = vec![];
        let mut v = 0.0;
        for _ in 0..7 {
            let t = Instant::now();
            let r = match name {
                "sum" => big.sum(None, false)?,
                "mean" => big.mean(None, false)?,
                _ => big.std(None, false, 0)?,
            };
            v = r.item()?;
            ts.push(t.elapsed().as_secs_f64() * 1e3);
        }
        println!("{name} 100M: {:.2} ms = {v}", med(ts));
    }
    let mut ts = vec![];
    let mut pi = 0.0;
    for _ in 0..5 {
        let t = Instant::now();
        let xs = rng.uniform(&[100_000_000], DType::F32)?;
        let ys = rng.uniform(&[100_000_000], DType::F32)?;
        pi = xs
            .mul(&xs)?
            .add(&ys.mul(&ys)?)?
            .le(1.0)?
            .mean(None, false)?
            .mul(4.0)?
            .item()?;
        ts.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!("mc pi 100M: {:.2} ms pi={pi}", med(ts));
    let c = rng.uniform(&[10_000_000], DType::F64)?;
    c.eval()?;
    let mut ts = vec![];
    let mut v = 0.0;
    for _ in 0..7 {
        let t = Instant::now();
        v = Array::where_(&c.gt(0.5)?, &c.mul(&c)?, &c.neg()?)?
            .sum(None, false)?
            .item()?;
        ts.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!("cond 10M f64: {:.2} ms {v}", med(ts));
    let im = rng.uniform(&[1000, 256, 256], DType::F32)?;
    im.eval()?;
    let mut ts = vec![];
    for _ in 0..5 {
        let t = Instant::now();
        let m = im.mean(Some(&[1, 2]), true)?;
        let s = im.std(Some(&[1, 2]), true, 0)?;
        let y = im.sub(&m)?.div(&s.add(1e-8)?)?;
        let z = y.sin()?.mul(0.5)?.add(0.5)?;
        z.eval()?;
        ts.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!("image 1000: {:.2} ms", med(ts));
    let m = im.mean(Some(&[1, 2]), true)?;
    let s = im.std(Some(&[1, 2]), true, 0)?;
    let y = im.sub(&m)?.div(&s.add(1e-8)?)?;
    let z = y.sin()?.mul(0.5)?.add(0.5)?;
    for k in lower(&[z])? {
        println!(
            "  kernel {} outputs={} reasons={:?}",
            k.name(),
            k.outputs.len(),
            k.reasons
        );
    }
    let small = Array::from_vec((0..100).map(|i| i as f32).collect(), &[100])?;
    let mut ts = vec![];
    for _ in 0..2000 {
        let t = Instant::now();
        let r = small.mul(&small)?.add(&small.sin()?)?.add(1.0)?;
        r.eval()?;
        ts.push(t.elapsed().as_secs_f64() * 1e6);
    }
    println!("small 100: {:.2} us", med(ts));
    Ok(())
}
