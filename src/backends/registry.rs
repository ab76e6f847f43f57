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
    #[cfg(feature = "cuda")]
    ("cuda", super::cuda::discover),
];

/// Whether a backend was found, and if not, why.
#[derive(Debug, Clone)]
pub struct BackendStatus {
    /// The backend's name.
    pub name: String,
    /// The backend, when it started (else the reason is in the entry).
    pub backend: Option<Arc<dyn Backend>>,
    /// Why the backend is unavailable (`None` when it is available).
    pub reason: Option<String>,
}

/// A backend found (or not) at run time, with its devices.
struct Slot {
    status: BackendStatus,
    devices: Vec<Device>,
}

/// One slot per built-in backend, each discovered the first time something needs it: a
/// program that only uses the CPU never starts the Vulkan or GL drivers (which print to
/// stderr, and take ~0.1 s).
fn builtin_slots() -> &'static [OnceLock<Slot>] {
    static SLOTS: OnceLock<Vec<OnceLock<Slot>>> = OnceLock::new();
    SLOTS.get_or_init(|| BUILTIN.iter().map(|_| OnceLock::new()).collect())
}

/// Built-in backend `i`, discovered now if it was not yet.
fn builtin(i: usize) -> &'static Slot {
    builtin_slots()[i].get_or_init(|| discover_one(i))
}

/// The built-in backends already discovered (no discovery).
fn discovered() -> impl Iterator<Item = &'static Slot> {
    builtin_slots().iter().filter_map(OnceLock::get)
}

/// Every built-in backend, discovering those not yet discovered.
fn all_builtins() -> impl Iterator<Item = &'static Slot> {
    (0..BUILTIN.len()).map(builtin)
}

/// Users' backends, in registration order.
fn users() -> &'static RwLock<Vec<Slot>> {
    static USERS: RwLock<Vec<Slot>> = RwLock::new(Vec::new());
    &USERS
}

fn read_users() -> std::sync::RwLockReadGuard<'static, Vec<Slot>> {
    // Every write is a single push, so a poisoned lock is still consistent.
    users().read().unwrap_or_else(|e| e.into_inner())
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

fn discover_one(i: usize) -> Slot {
    let (name, discover) = BUILTIN[i];
    let allowed = env_list("DLARRAY_BACKENDS");
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
    let devices = match &status.backend {
        Some(b) => b
            .devices()
            .into_iter()
            .map(|d| Device::new(b.clone(), d))
            .collect(),
        None => Vec::new(),
    };
    Slot { status, devices }
}

/// Checks `DLARRAY_BACKENDS` (every name known) and `DLARRAY_REQUIRE` (every backend named
/// there available), against `statuses`.
fn check_environment(statuses: &[BackendStatus]) -> Result<()> {
    let builtin: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
    let listed = env_list("DLARRAY_BACKENDS").unwrap_or_default();
    check_backend_names("DLARRAY_BACKENDS", &listed, &builtin)?;
    for name in env_list("DLARRAY_REQUIRE").unwrap_or_default() {
        match statuses.iter().find(|s| s.name == name) {
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
                let known: Vec<&str> = statuses.iter().map(|s| s.name.as_str()).collect();
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

/// An error naming every entry of `names` that is not in `known` (and listing `known`), as
/// an unknown backend in a user's list must be: never an empty result.
pub fn check_backend_names(what: &str, names: &[String], known: &[&str]) -> Result<()> {
    let unknown: Vec<String> = names
        .iter()
        .filter(|n| !known.contains(&n.as_str()))
        .map(|n| format!("`{n}`"))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "{what} names unknown backend(s) {}: the known backends are {}",
        unknown.join(", "),
        known.join(", ")
    )))
}

/// Every available device, CPU first (discovering every backend). Fails if a backend named
/// in `DLARRAY_REQUIRE` is unavailable, with the reason discovery gave.
pub fn devices() -> Result<Vec<Device>> {
    check_environment(&backends())?;
    let mut out: Vec<Device> = all_builtins()
        .flat_map(|s| s.devices.iter().cloned())
        .collect();
    out.extend(read_users().iter().flat_map(|s| s.devices.iter().cloned()));
    Ok(out)
}

/// Every known backend with its availability (a user's backend replaces an unavailable
/// built-in of the same name).
pub fn backends() -> Vec<BackendStatus> {
    let users = read_users();
    let mut out: Vec<BackendStatus> = all_builtins()
        .filter(|s| !users.iter().any(|u| u.status.name == s.status.name))
        .map(|s| s.status.clone())
        .collect();
    out.extend(users.iter().map(|u| u.status.clone()));
    out
}

/// The device named `name` (`cpu:0`, `tpu:3`, ...), discovering only its backend.
pub fn get_device(name: &str) -> Result<Device> {
    let backend = name.split(':').next().unwrap_or(name);
    let in_users = read_users()
        .iter()
        .filter(|u| u.status.name == backend)
        .flat_map(|u| u.devices.iter())
        .find(|d| d.name() == name)
        .cloned();
    let found = in_users.or_else(|| {
        let i = BUILTIN.iter().position(|(n, _)| *n == backend)?;
        builtin(i)
            .devices
            .iter()
            .find(|d| d.name() == name)
            .cloned()
    });
    found.ok_or_else(|| unknown_device(name))
}

/// The first device satisfying `pred`: among the backends already discovered first, then
/// discovering the rest.
pub(crate) fn find_device(pred: impl Fn(&Device) -> bool) -> Option<Device> {
    let seen = || {
        discovered()
            .flat_map(|s| s.devices.iter())
            .find(|d| pred(d))
            .cloned()
            .or_else(|| {
                read_users()
                    .iter()
                    .flat_map(|s| s.devices.iter())
                    .find(|d| pred(d))
                    .cloned()
            })
    };
    seen().or_else(|| {
        all_builtins().for_each(drop);
        seen()
    })
}

/// The default device: the first device of the first available backend (`cpu:0` unless
/// CPU is disabled); later backends are not discovered for it.
pub fn default_device() -> Result<Device> {
    let first = (0..BUILTIN.len())
        .find_map(|i| builtin(i).devices.first().cloned())
        .or_else(|| read_users().iter().find_map(|u| u.devices.first().cloned()));
    first.ok_or_else(|| {
        Error::UnknownDevice(
            "no device is available (is DLARRAY_BACKENDS excluding them all?)".to_string(),
        )
    })
}

/// "unknown device `x`", with the devices that exist and why missing backends are missing.
pub(crate) fn unknown_device(name: &str) -> Error {
    let all: Vec<Device> = all_builtins()
        .flat_map(|s| s.devices.iter().cloned())
        .chain(read_users().iter().flat_map(|s| s.devices.iter().cloned()))
        .collect();
    let statuses = backends();
    let names: Vec<&str> = all.iter().map(|d| d.name()).collect();
    let mut msg = format!(
        "unknown device `{name}`; the devices here are {}",
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    );
    let backend = name.split(':').next().unwrap_or(name);
    if let Some(s) = statuses.iter().find(|s| s.name == backend)
        && let Some(reason) = &s.reason
    {
        msg.push_str(&format!(" (backend `{backend}` is unavailable: {reason})"));
    }
    Error::UnknownDevice(msg)
}

/// Adds a user's backend; its devices join `devices()`. Names must be unique (a built-in
/// that is unavailable here may be replaced).
pub fn register_backend(backend: Arc<dyn Backend>) -> Result<Vec<Device>> {
    let name = backend.name().to_string();
    if name.is_empty() || name.contains(':') {
        return Err(Error::invalid(format!("invalid backend name `{name}`")));
    }
    let taken = || Error::invalid(format!("backend `{name}` is already registered"));
    if let Some(i) = BUILTIN.iter().position(|(n, _)| *n == name)
        && builtin(i).status.backend.is_some()
    {
        return Err(taken());
    }
    let registered = |users: &[Slot]| users.iter().any(|u| u.status.name == name);
    // One registration at a time, from the check to the push: a device is never freed (see
    // `Device`), so two threads registering one name at once left the loser's devices
    // behind (valgrind saw them as lost). The backend's own calls run outside the users'
    // lock, which readers take: they may ask the registry for devices.
    static REGISTERING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = REGISTERING.lock().unwrap_or_else(|e| e.into_inner());
    if registered(&users().read().unwrap_or_else(|e| e.into_inner())) {
        return Err(taken());
    }
    let devices: Vec<Device> = backend
        .devices()
        .into_iter()
        .map(|d| Device::new(backend.clone(), d))
        .collect();
    let mut users = users().write().unwrap_or_else(|e| e.into_inner());
    users.push(Slot {
        status: BackendStatus {
            name,
            backend: Some(backend),
            reason: None,
        },
        devices: devices.clone(),
    });
    Ok(devices)
}
