//! Choosing the evaluation backend: `KERF_COMPUTE=auto|gpu|cpu` (or a `--compute` flag).
//! `auto` takes a hardware GPU when there is one and the CPU backend otherwise; `gpu` takes any
//! Vulkan adapter, a software one such as lavapipe included (a correctness check, not a speed-up),
//! and fails when there is none; `cpu` never touches the GPU.

use crate::{CpuEvaluator, Evaluator, GpuEvaluator};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Compute {
    #[default]
    Auto,
    Gpu,
    Cpu,
}

impl std::str::FromStr for Compute {
    type Err = String;
    fn from_str(s: &str) -> Result<Compute, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Compute::Auto),
            "gpu" => Ok(Compute::Gpu),
            "cpu" => Ok(Compute::Cpu),
            other => Err(format!(
                "unknown compute backend '{other}'; allowed: auto, gpu, cpu"
            )),
        }
    }
}

impl Compute {
    /// From `KERF_COMPUTE` (unset: auto).
    pub fn from_env() -> Result<Compute, String> {
        std::env::var("KERF_COMPUTE")
            .unwrap_or_default()
            .parse()
            .map_err(|e| format!("KERF_COMPUTE: {e}"))
    }
}

/// The backend for `choice`; its `name()` says which it is ("cpu" or "gpu: ADAPTER").
pub fn choose(choice: Compute) -> Result<Arc<dyn Evaluator>, String> {
    match choice {
        Compute::Cpu => Ok(Arc::new(CpuEvaluator)),
        Compute::Gpu => GpuEvaluator::new(true)
            .map(|g| Arc::new(g) as Arc<dyn Evaluator>)
            .map_err(|e| format!("KERF_COMPUTE=gpu: {e}")),
        Compute::Auto => match GpuEvaluator::new(false) {
            Ok(g) => Ok(Arc::new(g)),
            Err(why) => {
                tracing::info!(reason = %why, "no hardware GPU: evaluating on the CPU");
                Ok(Arc::new(CpuEvaluator))
            }
        },
    }
}
