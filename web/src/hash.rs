//! The URL hash holds the view so a link reopens it:
//! `#sample=NAME&mode=stored|full|diff&axis=time&zoom=LEVEL&at=CENTER`
//! (`at` is an index, or UTC ms on the time axis), and for the Contents
//! page `&view=contents&lane=N&ci=INDEX` (the file and the log index shown);
//! `&entry=LANE:INDEX` opens the inspector on that file's entry.

use timeline::axis::AxisMode;
use timeline::SizeView;

#[derive(Clone, Debug, PartialEq, Default)]
pub struct HashState {
    pub sample: Option<String>,
    pub mode: Option<SizeView>,
    pub axis: Option<AxisMode>,
    pub zoom: Option<f64>,
    pub center: Option<f64>,
    /// The Contents page is shown.
    pub contents: bool,
    pub lane: Option<usize>,
    /// The Contents page's index.
    pub contents_at: Option<u64>,
    /// The entry in the inspector: lane and log index.
    pub entry: Option<(usize, u64)>,
    /// `renderer=plotters`: the timeline drawn by plotters (a measurement).
    pub plotters: bool,
    /// `workers=1`: a load runs in one worker, its cluster check in the
    /// same walk; `workers=2`: a second worker checks beside it. Without
    /// it the page chooses by the number of cores (a measurement knob).
    pub workers: Option<u8>,
}

pub fn parse(hash: &str) -> HashState {
    let mut s = HashState::default();
    for pair in hash.trim_start_matches('#').split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match k {
            "sample" if !v.is_empty() => s.sample = Some(v.to_string()),
            "mode" => s.mode = SizeView::from_name(v),
            "axis" => s.axis = AxisMode::from_name(v),
            "zoom" => s.zoom = v.parse().ok().filter(|z: &f64| z.is_finite() && *z >= 1.0),
            "at" => s.center = v.parse().ok().filter(|c: &f64| c.is_finite()),
            "view" => s.contents = v == "contents",
            "lane" => s.lane = v.parse().ok(),
            "ci" => s.contents_at = v.parse().ok(),
            "renderer" => s.plotters = v == "plotters",
            "workers" => s.workers = v.parse().ok().filter(|n| (1..=2).contains(n)),
            "entry" => {
                s.entry = v
                    .split_once(':')
                    .and_then(|(l, i)| Some((l.parse().ok()?, i.parse().ok()?)))
            }
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
    if s.contents {
        parts.push("view=contents".into());
    }
    if let Some(l) = s.lane {
        parts.push(format!("lane={l}"));
    }
    if let Some(c) = s.contents_at {
        parts.push(format!("ci={c}"));
    }
    if let Some((l, i)) = s.entry {
        parts.push(format!("entry={l}:{i}"));
    }
    if s.plotters {
        parts.push("renderer=plotters".into());
    }
    if let Some(n) = s.workers {
        parts.push(format!("workers={n}"));
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
            mode: Some(SizeView::Diff),
            axis: Some(AxisMode::Time),
            zoom: Some(2.5),
            center: Some(40.0),
            contents: true,
            lane: Some(2),
            contents_at: Some(17),
            entry: Some((1, 4321)),
            plotters: true,
            workers: Some(2),
        };
        assert_eq!(parse(&format(&s)), s);
        assert_eq!(
            parse("#zoom=-3&mode=nope&at=NaN&ci=-1&lane=x&entry=1&entry=a:2"),
            HashState::default()
        );
    }
}
