// Rule: a rank-0 view has no axis to remove (one error, naming the rank).
use dlspan::HostMdspan;

fn main() {
    let data = [1.0f32];
    let scalar = HostMdspan::<f32, 0>::from_slice(&data, []).unwrap();
    let nothing = scalar.index_axis(0, 0);
    println!("{}", nothing.size());
}
