// Rule: shared views are covariant in their lifetime (a longer borrow passes where a shorter is expected).
use dlspan::HostMdspan;

fn shorter<'short>(a: HostMdspan<'short, u8, 1>, b: HostMdspan<'short, u8, 1>) -> usize {
    a.size() + b.size()
}

fn main() {
    static LONG: [u8; 2] = [1, 2];
    let long: HostMdspan<'static, u8, 1> = HostMdspan::from_slice(&LONG, [2]).unwrap();
    let local = [3u8];
    let short = HostMdspan::<u8, 1>::from_slice(&local, [1]).unwrap();
    assert_eq!(shorter(long, short), 3);
    let views: Vec<HostMdspan<'_, u8, 1>> = vec![long, short];
    assert_eq!(views.len(), 2);
}
