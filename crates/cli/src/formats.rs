//! inspect, dump, check, convert (owned by the formats area).

fn todo(name: &str) -> u8 {
    eprintln!("ovsdb-scope {name}: not built yet");
    2
}
pub fn inspect(_args: &[String]) -> u8 {
    todo("inspect")
}
pub fn dump(_args: &[String]) -> u8 {
    todo("dump")
}
pub fn check(_args: &[String]) -> u8 {
    todo("check")
}
pub fn convert(_args: &[String]) -> u8 {
    todo("convert")
}
