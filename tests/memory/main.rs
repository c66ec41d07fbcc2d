//! Memory of the FIL accountant (Guo et al. 2022, Eq. 5 by JVPs): one DP-SGD step of the
//! MNIST ConvNet (p = 26,010, d = 784) with k = 50 coordinates must never hold anything like
//! the p × d Jacobian. A counting global allocator measures the peak of live heap bytes.
//!
//! The batched clipped-gradient sum (`Sequential::clipped_grad_sum`) must allocate nothing per
//! call once its workspace exists.
//!
//! This test crate is the only place with `unsafe` (the `GlobalAlloc` impl). Its tests hold
//! one lock (`serial`) so that none allocates while another measures the peak; allocation
//! counts per test are also kept per thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use reconbound::accounting::fil::{FilAccountant, FilConfig, FilMode, KappaRule};
use reconbound::data::embedded_mnist;
use reconbound::nn::{arch, Activation};
use reconbound::train::clip::ClipMethod;
use reconbound::train::dpsgd::{Clipping, DpSgd, DpSgdConfig};
use reconbound::train::observer::{Observer, StepInfo};
use reconbound::train::sampling::Sampling;

/// Live bytes, their peak since the last reset, and the number of allocations.
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static COUNT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Allocations made by the current thread (no destructor, so access never allocates).
    static MINE: Cell<usize> = const { Cell::new(0) };
}

struct Counting;

fn grew(bytes: usize) {
    let now = LIVE.fetch_add(bytes, Ordering::SeqCst) + bytes;
    PEAK.fetch_max(now, Ordering::SeqCst);
    COUNT.fetch_add(1, Ordering::SeqCst);
    let _ = MINE.try_with(|c| c.set(c.get() + 1));
}

/// Allocations made by the current thread so far.
fn mine() -> usize {
    MINE.with(|c| c.get())
}

/// One test at a time (a failed test must not block the others: poisoning is ignored).
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract (layout validity, pointer provenance, deallocating with the same
// layout) is exactly `System`'s; the counters are plain atomics and never touch the memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds `alloc_zeroed`'s contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by this allocator (i.e. by `System`) with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged; `ptr`/`layout` come from this allocator.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::SeqCst);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Resets the peak to the current live bytes and returns them.
fn reset_peak() -> usize {
    let now = LIVE.load(Ordering::SeqCst);
    PEAK.store(now, Ordering::SeqCst);
    now
}

#[test]
fn guo22_eq5_fil_step_memory_is_far_below_the_jacobian() {
    let _serial = serial();
    let data = embedded_mnist()
        .unwrap()
        .subset(&[0, 1, 2, 3, 4, 5, 6, 7])
        .unwrap();
    let model = arch::mnist_tanh_convnet().unwrap();
    let (p, d) = (model.num_params(), data.dim());
    assert_eq!((p, d), (26_010, 784));
    let dp = DpSgdConfig {
        clipping: Some(Clipping {
            method: ClipMethod::Gelu,
            norm: 1.0,
        }),
        noise_multiplier: 1.0,
        sampling: Sampling::FixedSize,
        batch_size: 4,
        steps: 1,
        seed: 1,
        ..DpSgdConfig::default()
    };
    let config = FilConfig {
        mode: FilMode::Trace { coords: 50 },
        kappa: KappaRule::Subsampled { delta: None },
        seed: 2,
    };
    let mut params = model.init_params(3);
    let mut trainer = DpSgd::new(&model, &data, &dp).unwrap();

    // Peak live bytes above the baseline while the accountant is built and observes one
    // DP-SGD step of 4 examples (the trainer's own step allocates only its batch).
    let base = reset_peak();
    let mut fil = FilAccountant::new(&model, &data, &dp, &config).unwrap();
    trainer.step(&mut params, &mut fil).unwrap();
    let peak = PEAK.load(Ordering::SeqCst) - base;
    let jacobian = p * d * 8;
    println!(
        "FIL step (ConvNet, k = 50, 4 examples): peak {peak} bytes = {:.2} MB; p·d·8 = {jacobian} bytes; ratio {:.4}",
        peak as f64 / 1e6,
        peak as f64 / jacobian as f64
    );
    assert!(
        fil.results()
            .unwrap()
            .iter()
            .filter(|r| r.steps_in_batch == 1)
            .count()
            == 4
    );
    // O(p·N) with N = k = 50 tangent lanes: the fast path keeps per-lane activations,
    // layer-boundary gradients and one weight-sized buffer per lane, ≈ 1.6·p·k floats here.
    // Bound: 2·p·k·8 bytes plus 1 MB of slack — a fifth of the Jacobian, which it must never
    // approach.
    let lanes_bound = 2 * p * 50 * 8 + 1_000_000;
    assert!(
        peak < lanes_bound && peak < jacobian / 5,
        "peak {peak} bytes exceeds 2·p·k·8 + 1 MB = {lanes_bound} bytes or a fifth of the p × d Jacobian ({jacobian} bytes)"
    );

    // No allocation at all per example or per step once the accountant exists: observe a
    // step (same parameters, a batch of 3) and count allocations.
    let released = vec![0.0; p];
    let info = StepInfo {
        step: 1,
        params: &params,
        batch: &[0, 5, 7],
        clipped: None,
        released: &released,
        batch_sum: &released,
        loss_sum: 0.0,
        normaliser: 4.0,
        noise_std: fil.noise_std_of_sum() / 4.0,
    };
    let before = COUNT.load(Ordering::SeqCst);
    fil.observe(&info).unwrap();
    let allocations = COUNT.load(Ordering::SeqCst) - before;
    assert_eq!(allocations, 0, "observe allocated {allocations} times");
}

#[test]
fn batched_clipped_sum_allocates_nothing_per_call() {
    // Once the workspace exists, `clipped_grad_sum` runs without a single allocation (counted
    // on this thread), for every clipping mode and for batch sizes that leave a partial block.
    let _serial = serial();
    let data = embedded_mnist().unwrap();
    let model = arch::mlp(784, &[10], 10, Activation::Elu).unwrap();
    let params = model.init_params(1);
    let batch: Vec<usize> = (0..250).map(|i| (i * 7) % 2000).collect();
    let mut ws = model.batch_workspace().unwrap();
    let mut sum = vec![0.0; model.num_params()];
    let clippings = [
        None,
        Some(Clipping {
            method: ClipMethod::Hard,
            norm: 0.5,
        }),
        Some(Clipping {
            method: ClipMethod::Gelu,
            norm: 0.5,
        }),
    ];
    let before = mine();
    for clipping in clippings {
        for len in [250, 33, 1] {
            let loss = model
                .clipped_grad_sum(&params, &data, &batch[..len], clipping, &mut sum, &mut ws)
                .unwrap();
            assert!(loss > 0.0);
        }
    }
    let allocations = mine() - before;
    assert_eq!(
        allocations, 0,
        "clipped_grad_sum allocated {allocations} times"
    );
}
