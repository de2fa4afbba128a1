//! simulate, compare (owned by the simulator area).

pub fn simulate(_args: &[String]) -> u8 {
    eprintln!("ovsdb-scope simulate: not built yet");
    2
}
pub fn compare(_args: &[String]) -> u8 {
    eprintln!("ovsdb-scope compare: not built yet");
    2
}
