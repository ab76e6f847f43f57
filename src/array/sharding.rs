//! Which slice of an array each device holds (after `jax.sharding`).

use crate::backends::{Device, MemoryKind};
use crate::error::{Error, Result};
use std::fmt;
use std::ops::Range;

/// A logical n-dimensional grid of devices with named axes.
#[derive(Clone, PartialEq, Eq)]
pub struct Mesh {
    devices: Vec<Device>,
    shape: Vec<usize>,
    axis_names: Vec<String>,
}

impl Mesh {
    /// `devices` laid out row-major over `shape`, whose axes are called `axis_names`.
    pub fn new(devices: Vec<Device>, shape: &[usize], axis_names: &[&str]) -> Result<Mesh> {
        if shape.len() != axis_names.len() {
            return Err(Error::invalid(format!(
                "mesh shape {shape:?} and axis names {axis_names:?} differ in length"
            )));
        }
        let n = crate::layout::checked_size(shape)?;
        if n != devices.len() || n == 0 {
            return Err(Error::invalid(format!(
                "mesh shape {shape:?} needs {n} devices, got {}",
                devices.len()
            )));
        }
        for (i, d) in devices.iter().enumerate() {
            if devices[..i].contains(d) {
                return Err(Error::invalid(format!(
                    "device {d} appears twice in the mesh"
                )));
            }
        }
        for (i, a) in axis_names.iter().enumerate() {
            if axis_names[..i].contains(a) {
                return Err(Error::invalid(format!("mesh axis `{a}` appears twice")));
            }
        }
        Ok(Mesh {
            devices,
            shape: shape.to_vec(),
            axis_names: axis_names.iter().map(|s| s.to_string()).collect(),
        })
    }

    /// A one-axis mesh over `devices`.
    pub fn linear(devices: Vec<Device>, axis: &str) -> Result<Mesh> {
        let n = devices.len();
        Mesh::new(devices, &[n], &[axis])
    }

    /// The devices, in mesh order (row-major over the mesh axes).
    pub fn devices(&self) -> &[Device] {
        &self.devices
    }
    /// The extent of each mesh axis.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// The name of each mesh axis.
    pub fn axis_names(&self) -> &[String] {
        &self.axis_names
    }

    fn axis(&self, name: &str) -> Result<usize> {
        self.axis_names
            .iter()
            .position(|a| a == name)
            .ok_or_else(|| Error::invalid(format!("mesh has no axis `{name}`")))
    }

    /// Coordinates of the `flat`-th device.
    fn coords(&self, mut flat: usize) -> Vec<usize> {
        let mut c = vec![0; self.shape.len()];
        for k in (0..self.shape.len()).rev() {
            c[k] = flat % self.shape[k];
            flat /= self.shape[k];
        }
        c
    }
}

impl fmt::Debug for Mesh {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let axes: Vec<String> = self
            .axis_names
            .iter()
            .zip(&self.shape)
            .map(|(a, n)| format!("{a}={n}"))
            .collect();
        write!(f, "Mesh({}; {:?})", axes.join(", "), self.devices)
    }
}

/// For each array axis, the mesh axis it is split over (`None`: not split).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PartitionSpec(pub Vec<Option<String>>);

impl PartitionSpec {
    /// A spec naming, per array axis, the mesh axis it is split over (`None`: not split).
    pub fn new(axes: &[Option<&str>]) -> PartitionSpec {
        PartitionSpec(axes.iter().map(|a| a.map(str::to_string)).collect())
    }
    /// Nothing split: every device holds the whole array.
    pub fn replicated() -> PartitionSpec {
        PartitionSpec(Vec::new())
    }
    /// The mesh axis array axis `k` is split over.
    pub fn get(&self, k: usize) -> Option<&str> {
        self.0.get(k).and_then(|a| a.as_deref())
    }
}

/// How an array is laid out over devices.
#[derive(Clone, PartialEq, Eq)]
pub enum Sharding {
    /// All of the array on one device, in one memory kind.
    SingleDevice(Device, MemoryKind),
    /// A full copy on each device.
    Replicated(Vec<Device>),
    /// Split over a mesh; uneven splits give smaller (possibly empty) last shards, as JAX's.
    Named(Mesh, PartitionSpec),
}

/// Plainly, for printed arrays: `NamedSharding(mesh={x: 4}, spec=('x', None), devices=[...])`.
impl fmt::Display for Sharding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = |ds: &[Device]| ds.iter().map(Device::name).collect::<Vec<_>>().join(", ");
        match self {
            Sharding::SingleDevice(d, k) => write!(f, "SingleDeviceSharding({d}, {k})"),
            Sharding::Replicated(ds) => write!(f, "Replicated([{}])", names(ds)),
            Sharding::Named(m, s) => {
                let axes: Vec<String> = m
                    .axis_names
                    .iter()
                    .zip(&m.shape)
                    .map(|(a, n)| format!("{a}: {n}"))
                    .collect();
                let spec: Vec<String> =
                    s.0.iter()
                        .map(|a| a.as_ref().map_or("None".to_string(), |a| format!("'{a}'")))
                        .collect();
                let trail = if spec.len() == 1 { "," } else { "" };
                write!(
                    f,
                    "NamedSharding(mesh={{{}}}, spec=({}{trail}), devices=[{}])",
                    axes.join(", "),
                    spec.join(", "),
                    names(&m.devices)
                )
            }
        }
    }
}

impl fmt::Debug for Sharding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sharding::SingleDevice(d, k) => write!(f, "SingleDevice({d}, {k})"),
            Sharding::Replicated(ds) => write!(f, "Replicated({ds:?})"),
            Sharding::Named(m, s) => write!(f, "Named({m:?}, {:?})", s.0),
        }
    }
}

/// `n` split into `parts` chunks of `ceil(n / parts)`: the range chunk `i` covers.
pub fn split_range(n: usize, parts: usize, i: usize) -> Range<usize> {
    let chunk = n.div_ceil(parts.max(1));
    let start = (i * chunk).min(n);
    start..(start + chunk).min(n)
}

impl Sharding {
    /// One device, its default memory kind.
    pub fn single(device: &Device) -> Sharding {
        Sharding::SingleDevice(device.clone(), device.default_memory_kind())
    }

    /// Splits axis `axis` evenly (as far as possible) over `devices`.
    pub fn split(devices: Vec<Device>, axis: usize) -> Result<Sharding> {
        let mesh = Mesh::linear(devices, "x")?;
        let mut spec = vec![None; axis + 1];
        spec[axis] = Some("x");
        Ok(Sharding::Named(mesh, PartitionSpec::new(&spec)))
    }

    /// The devices, each once, in mesh order.
    pub fn devices(&self) -> Vec<Device> {
        match self {
            Sharding::SingleDevice(d, _) => vec![d.clone()],
            Sharding::Replicated(ds) => ds.clone(),
            Sharding::Named(m, _) => m.devices.clone(),
        }
    }

    /// The memory kind shards live in.
    pub fn memory_kind(&self) -> MemoryKind {
        match self {
            Sharding::SingleDevice(_, k) => *k,
            other => other
                .devices()
                .first()
                .map_or(MemoryKind::Device, Device::default_memory_kind),
        }
    }

    /// Checks the sharding can lay out an array of `ndim` axes.
    pub fn validate(&self, ndim: usize) -> Result<()> {
        match self {
            Sharding::SingleDevice(d, k) => {
                if !d.supports_memory_kind(*k) {
                    return Err(Error::invalid(format!(
                        "device {d} has no `{k}` memory (it has {:?})",
                        d.memory_kinds()
                    )));
                }
            }
            Sharding::Replicated(ds) => {
                if ds.is_empty() {
                    return Err(Error::invalid("a replicated sharding needs a device"));
                }
                for (i, d) in ds.iter().enumerate() {
                    if ds[..i].contains(d) {
                        return Err(Error::invalid(format!("device {d} appears twice")));
                    }
                }
            }
            Sharding::Named(mesh, spec) => {
                if spec.0.len() > ndim {
                    return Err(Error::invalid(format!(
                        "partition spec {:?} has more entries than the array's {ndim} axes",
                        spec.0
                    )));
                }
                let mut used = Vec::new();
                for name in spec.0.iter().flatten() {
                    mesh.axis(name)?;
                    if used.contains(&name) {
                        return Err(Error::invalid(format!(
                            "mesh axis `{name}` splits more than one array axis"
                        )));
                    }
                    used.push(name);
                }
            }
        }
        Ok(())
    }

    /// For each device (in mesh order), the global slice of an array of `shape` it holds.
    pub fn shard_indices(&self, shape: &[usize]) -> Result<Vec<(Device, Vec<Range<usize>>)>> {
        self.validate(shape.len())?;
        let full: Vec<Range<usize>> = shape.iter().map(|&n| 0..n).collect();
        Ok(match self {
            Sharding::SingleDevice(d, _) => vec![(d.clone(), full)],
            Sharding::Replicated(ds) => ds.iter().map(|d| (d.clone(), full.clone())).collect(),
            Sharding::Named(mesh, spec) => {
                let mut out = Vec::with_capacity(mesh.devices.len());
                for (flat, d) in mesh.devices.iter().enumerate() {
                    let coords = mesh.coords(flat);
                    let mut idx = full.clone();
                    for (k, r) in idx.iter_mut().enumerate() {
                        if let Some(name) = spec.get(k) {
                            let m = mesh.axis(name)?;
                            *r = split_range(shape[k], mesh.shape[m], coords[m]);
                        }
                    }
                    out.push((d.clone(), idx));
                }
                out
            }
        })
    }

    /// The sharding after reducing away `axes` (sorted) of an `ndim`-axis array.
    pub(crate) fn without_axes(&self, axes: &[usize]) -> Sharding {
        match self {
            Sharding::Named(m, spec) => {
                let kept = spec
                    .0
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| !axes.contains(k))
                    .map(|(_, a)| a.clone())
                    .collect();
                Sharding::Named(m.clone(), PartitionSpec(kept))
            }
            other => other.clone(),
        }
    }

    /// The sharding after permuting axes (`perm[k]` = old axis of new axis `k`).
    pub(crate) fn permuted(&self, perm: &[usize]) -> Sharding {
        let sources: Vec<Option<usize>> = perm.iter().map(|&p| Some(p)).collect();
        self.with_axes(&sources)
    }

    /// The sharding of a view whose axis `k` is this array's axis `sources[k]`, or a new axis
    /// (not split) where that is `None`. Only a named sharding names axes; its spec drops
    /// trailing `None`s, so equal shardings compare equal however they were derived.
    pub(crate) fn with_axes(&self, sources: &[Option<usize>]) -> Sharding {
        match self {
            Sharding::Named(m, spec) => {
                let mut axes: Vec<Option<String>> = sources
                    .iter()
                    .map(|p| p.and_then(|p| spec.0.get(p).cloned().flatten()))
                    .collect();
                while axes.last().is_some_and(Option::is_none) {
                    axes.pop();
                }
                Sharding::Named(m.clone(), PartitionSpec(axes))
            }
            other => other.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::split_range;

    #[test]
    fn uneven_splits_cover_the_axis_once() {
        for n in 0..20 {
            for parts in 1..6 {
                let mut next = 0;
                for i in 0..parts {
                    let r = split_range(n, parts, i);
                    assert_eq!(r.start, next);
                    next = r.end;
                }
                assert_eq!(next, n);
            }
        }
        assert_eq!(split_range(10, 4, 3), 9..10);
        assert_eq!(split_range(3, 4, 3), 3..3);
    }
}
