//! Run-time discovery of backends, `DLARRAY_BACKENDS` / `DLARRAY_REQUIRE`, and users' own
//! backends (`register_backend`).

use super::{Backend, Device};
use crate::error::{Error, Result};
use std::sync::{Arc, OnceLock, RwLock};

/// A built-in backend's discovery: the backend, or why it is unavailable.
type Discover = fn() -> std::result::Result<Arc<dyn Backend>, String>;

/// Built-in backends in discovery order (CPU first, so `devices()[0]` is `cpu:0`).
const BUILTIN: &[(&str, Discover)] = &[
    ("cpu", super::cpu::discover),
    ("tpu", super::tpu_host::discover),
    #[cfg(feature = "wgpu")]
    ("wgpu", super::wgpu::discover),
];

/// Whether a backend was found, and if not, why.
#[derive(Debug, Clone)]
pub struct BackendStatus {
    pub name: String,
    pub backend: Option<Arc<dyn Backend>>,
    /// Why the backend is unavailable (`None` when it is available).
    pub reason: Option<String>,
}

struct Registry {
    statuses: Vec<BackendStatus>,
    devices: Vec<Device>,
    /// Names in `DLARRAY_BACKENDS` that no built-in backend has (reported by `devices()`).
    unknown_allowed: Vec<String>,
}

fn registry() -> &'static RwLock<Registry> {
    static REGISTRY: OnceLock<RwLock<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(|| RwLock::new(discover_all()))
}

fn env_list(var: &str) -> Option<Vec<String>> {
    let v = std::env::var(var).ok()?;
    Some(
        v.split(',')
            .map(|s| s.trim().to_ascii_lowercase())
            .filter(|s| !s.is_empty())
            .collect(),
    )
}

fn discover_all() -> Registry {
    let allowed = env_list("DLARRAY_BACKENDS");
    let unknown_allowed = allowed
        .iter()
        .flatten()
        .filter(|n| !BUILTIN.iter().any(|(b, _)| b == n))
        .cloned()
        .collect();
    let mut reg = Registry {
        statuses: Vec::new(),
        devices: Vec::new(),
        unknown_allowed,
    };
    for &(name, discover) in BUILTIN {
        let status = if allowed
            .as_ref()
            .is_some_and(|a| !a.iter().any(|n| n == name))
        {
            BackendStatus {
                name: name.to_string(),
                backend: None,
                reason: Some("not listed in DLARRAY_BACKENDS".to_string()),
            }
        } else {
            match discover() {
                Ok(b) => BackendStatus {
                    name: name.to_string(),
                    backend: Some(b),
                    reason: None,
                },
                Err(reason) => {
                    log::debug!("backend {name} unavailable: {reason}");
                    BackendStatus {
                        name: name.to_string(),
                        backend: None,
                        reason: Some(reason),
                    }
                }
            }
        };
        if let Some(b) = &status.backend {
            reg.devices
                .extend(b.devices().into_iter().map(|d| Device::new(b.clone(), d)));
        }
        reg.statuses.push(status);
    }
    reg
}

fn read() -> std::sync::RwLockReadGuard<'static, Registry> {
    // A panic while holding the lock cannot leave the registry half-written (every write is
    // a single push), so a poisoned lock is still consistent.
    registry().read().unwrap_or_else(|e| e.into_inner())
}

/// Checks `DLARRAY_REQUIRE`: every backend named there must be available.
fn check_required(reg: &Registry) -> Result<()> {
    if !reg.unknown_allowed.is_empty() {
        let known: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
        return Err(Error::InvalidArgument(format!(
            "DLARRAY_BACKENDS names unknown backend(s) {}: the built-in backends are {}",
            reg.unknown_allowed
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", "),
            known.join(", ")
        )));
    }
    for name in env_list("DLARRAY_REQUIRE").unwrap_or_default() {
        match reg.statuses.iter().find(|s| s.name == name) {
            Some(BackendStatus {
                backend: Some(_), ..
            }) => {}
            Some(s) => {
                return Err(Error::BackendUnavailable {
                    backend: name,
                    reason: s.reason.clone().unwrap_or_default(),
                });
            }
            None => {
                let known: Vec<&str> = reg.statuses.iter().map(|s| s.name.as_str()).collect();
                return Err(Error::BackendUnavailable {
                    backend: name,
                    reason: format!(
                        "no such backend in this build (known: {})",
                        known.join(", ")
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Every available device, CPU first. Fails if a backend named in `DLARRAY_REQUIRE` is
/// unavailable, with the reason discovery gave.
pub fn devices() -> Result<Vec<Device>> {
    let reg = read();
    check_required(&reg)?;
    Ok(reg.devices.clone())
}

/// Every known backend with its availability.
pub fn backends() -> Vec<BackendStatus> {
    read().statuses.clone()
}

/// The device named `name` (`cpu:0`, `tpu:3`, ...).
pub fn get_device(name: &str) -> Result<Device> {
    let found = read().devices.iter().find(|d| d.name() == name).cloned();
    // The read lock is released before the error reads the registry again.
    found.ok_or_else(|| unknown_device(name))
}

/// The first device satisfying `pred`, without copying the device list.
pub(crate) fn find_device(pred: impl Fn(&Device) -> bool) -> Option<Device> {
    read().devices.iter().find(|d| pred(d)).cloned()
}

/// The default device: the first one discovered (`cpu:0` unless CPU is disabled).
pub fn default_device() -> Result<Device> {
    read().devices.first().cloned().ok_or_else(|| {
        Error::UnknownDevice(
            "no device is available (is DLARRAY_BACKENDS excluding them all?)".to_string(),
        )
    })
}

/// "unknown device `x`", with the devices that exist and why missing backends are missing.
pub(crate) fn unknown_device(name: &str) -> Error {
    let reg = read();
    let names: Vec<&str> = reg.devices.iter().map(|d| d.name()).collect();
    let mut msg = format!(
        "unknown device `{name}`; the devices here are {}",
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    );
    let backend = name.split(':').next().unwrap_or(name);
    if let Some(s) = reg.statuses.iter().find(|s| s.name == backend)
        && let Some(reason) = &s.reason
    {
        msg.push_str(&format!(" (backend `{backend}` is unavailable: {reason})"));
    }
    Error::UnknownDevice(msg)
}

/// Adds a user's backend; its devices join `devices()`. Names must be unique.
pub fn register_backend(backend: Arc<dyn Backend>) -> Result<Vec<Device>> {
    let mut reg = registry().write().unwrap_or_else(|e| e.into_inner());
    let name = backend.name().to_string();
    if name.is_empty() || name.contains(':') {
        return Err(Error::invalid(format!("invalid backend name `{name}`")));
    }
    if let Some(s) = reg.statuses.iter().find(|s| s.name == name) {
        if s.backend.is_some() {
            return Err(Error::invalid(format!(
                "backend `{name}` is already registered"
            )));
        }
    }
    let devices: Vec<Device> = backend
        .devices()
        .into_iter()
        .map(|d| Device::new(backend.clone(), d))
        .collect();
    reg.statuses.retain(|s| s.name != name);
    reg.statuses.push(BackendStatus {
        name,
        backend: Some(backend),
        reason: None,
    });
    reg.devices.extend(devices.iter().cloned());
    Ok(devices)
}
