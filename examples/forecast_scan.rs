use reconbound::attacks::audit::forecast::gaussian_audit_forecast;
use reconbound::accounting::gaussian::analytic_epsilon;
fn main() {
    for &n in &[100000u64, 300000] {
        for &delta in &[1e-5, 1e-3] {
            for &mu0 in &[0.25, 0.5, 0.75, 1.0] {
                let alpha = 1e-7;
                let e0 = analytic_epsilon(delta, mu0).unwrap();
                let f = gaussian_audit_forecast(2.0 * mu0, n, alpha, delta, 1e-7).unwrap();
                println!("N={n} delta={delta:e} mu0={mu0} eps(mu0)={e0:.3} forecast(2mu0)={:.3} [{:.3},{:.3}] u*={:.2}", f.epsilon_median, f.epsilon_low, f.epsilon_high, f.threshold);
            }
        }
    }
}
