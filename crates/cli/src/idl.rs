//! idl-experiment (owned by the IDL area).

pub fn experiment(_args: &[String]) -> u8 {
    eprintln!("ovsdb-scope idl-experiment: not built yet");
    2
}
