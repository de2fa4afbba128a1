//! The URL hash holds the view so a link reopens it:
//! `#sample=NAME&mode=stored|full|diff&axis=time&zoom=LEVEL&at=CENTER`
//! (`at` is an index, or UTC ms on the time axis).

use timeline::axis::AxisMode;
use timeline::StorageMode;

#[derive(Clone, Debug, PartialEq, Default)]
pub struct HashState {
    pub sample: Option<String>,
    pub mode: Option<StorageMode>,
    pub axis: Option<AxisMode>,
    pub zoom: Option<f64>,
    pub center: Option<f64>,
}

pub fn parse(hash: &str) -> HashState {
    let mut s = HashState::default();
    for pair in hash.trim_start_matches('#').split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match k {
            "sample" if !v.is_empty() => s.sample = Some(v.to_string()),
            "mode" => s.mode = StorageMode::from_name(v),
            "axis" => s.axis = AxisMode::from_name(v),
            "zoom" => s.zoom = v.parse().ok().filter(|z: &f64| z.is_finite() && *z >= 1.0),
            "at" => s.center = v.parse().ok().filter(|c: &f64| c.is_finite()),
            _ => {}
        }
    }
    s
}

pub fn format(s: &HashState) -> String {
    let mut parts = Vec::new();
    if let Some(n) = &s.sample {
        parts.push(format!("sample={n}"));
    }
    if let Some(m) = s.mode {
        parts.push(format!("mode={}", m.name()));
    }
    if let Some(a) = s.axis {
        parts.push(format!("axis={}", a.name()));
    }
    if let Some(z) = s.zoom {
        parts.push(format!("zoom={z:.3}"));
    }
    if let Some(c) = s.center {
        parts.push(format!("at={c:.1}"));
    }
    format!("#{}", parts.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let s = HashState {
            sample: Some("sb-scale".into()),
            mode: Some(StorageMode::Diff),
            axis: Some(AxisMode::Time),
            zoom: Some(2.5),
            center: Some(40.0),
        };
        assert_eq!(parse(&format(&s)), s);
        assert_eq!(parse("#zoom=-3&mode=nope&at=NaN"), HashState::default());
    }
}
