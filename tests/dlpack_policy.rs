//! The process-wide DLPack policy (its own test binary: it changes global state).

use dlarray::{Array, BufferError, DType, DlpackPolicy, Error, ExportOptions, set_dlpack_policy};

#[test]
fn process_wide_policy_and_per_call_override() {
    let tpu = dlarray::get_device("tpu:0").unwrap();
    let x = Array::ones(&[4], DType::F32)
        .unwrap()
        .to_device(&tpu)
        .unwrap();
    assert_eq!(dlarray::dlpack::dlpack_policy(), DlpackPolicy::HostFallback);
    assert!(
        x.to_dlpack().unwrap().is_copied() || x.to_dlpack().unwrap().fallback_reason().is_some()
    );
    set_dlpack_policy(DlpackPolicy::Strict);
    assert_eq!(
        x.to_dlpack().unwrap_err(),
        Error::Buffer(BufferError::TpuDeviceMemory)
    );
    let per_call = ExportOptions {
        policy: Some(DlpackPolicy::HostFallback),
        ..Default::default()
    };
    assert_eq!(
        x.to_dlpack_with(per_call).unwrap().fallback_reason(),
        Some(&BufferError::TpuDeviceMemory)
    );
    set_dlpack_policy(DlpackPolicy::HostFallback);
    assert!(x.to_dlpack().is_ok());
}
