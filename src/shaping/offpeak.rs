//! Off-peak windows: daily spans in the operator's time (a fixed UTC offset), and when the next
//! one opens.

const DAY_S: i64 = 86_400;

/// A daily span, in seconds of the day; `end <= start` crosses midnight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start_s: i64,
    pub end_s: i64,
}

fn time_of_day(text: &str) -> Result<i64, String> {
    let parts: Vec<&str> = text.trim().split(':').collect();
    let field = |i: usize, max: i64| -> Result<i64, String> {
        let part = parts.get(i).copied().unwrap_or("0");
        match part.parse::<i64>() {
            Ok(v) if (0..=max).contains(&v) && part.len() == 2 => Ok(v),
            _ => Err(format!("`{text}` is not HH:MM or HH:MM:SS")),
        }
    };
    if !(2..=3).contains(&parts.len()) {
        return Err(format!("`{text}` is not HH:MM or HH:MM:SS"));
    }
    let seconds = if parts.len() == 3 { field(2, 59)? } else { 0 };
    Ok(field(0, 24)? * 3600 + field(1, 59)? * 60 + seconds)
}

impl Window {
    /// `22:00-06:00`, `09:30:00-10:00:00`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (start, end) = text
            .split_once('-')
            .ok_or_else(|| format!("`{text}` is not START-END (e.g. 22:00-06:00)"))?;
        let (start_s, end_s) = (time_of_day(start)?, time_of_day(end)?);
        if start_s > DAY_S || end_s > DAY_S {
            return Err(format!("`{text}`: times run from 00:00 to 24:00"));
        }
        Ok(Self { start_s, end_s })
    }

    fn contains(self, second_of_day: i64) -> bool {
        if self.start_s < self.end_s {
            (self.start_s..self.end_s).contains(&second_of_day)
        } else {
            second_of_day >= self.start_s || second_of_day < self.end_s
        }
    }
}

/// `+08:00`, `-05:30`, `Z`: seconds east of UTC.
pub fn parse_offset(text: &str) -> Result<i64, String> {
    let t = text.trim();
    if t == "Z" || t == "UTC" {
        return Ok(0);
    }
    let bad = || format!("`{text}` is not an offset like +08:00 or -05:30");
    let (sign, rest) = match t.as_bytes().first() {
        Some(b'+') => (1, &t[1..]),
        Some(b'-') => (-1, &t[1..]),
        _ => return Err(bad()),
    };
    let (h, m) = rest.split_once(':').ok_or_else(bad)?;
    let (h, m) = (
        h.parse::<i64>().map_err(|_| bad())?,
        m.parse::<i64>().map_err(|_| bad())?,
    );
    if !(0..=14).contains(&h) || !(0..60).contains(&m) {
        return Err(bad());
    }
    Ok(sign * (h * 3600 + m * 60))
}

/// Off-peak windows in one offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    pub windows: Vec<Window>,
    pub offset_s: i64,
}

impl Schedule {
    /// From validated configuration text (invalid windows are left out).
    pub fn new(windows: &[String], offset: &str) -> Self {
        Self {
            windows: windows
                .iter()
                .filter_map(|w| Window::parse(w).ok())
                .collect(),
            offset_s: parse_offset(offset).unwrap_or(0),
        }
    }

    fn local_ms(&self, now_ms: u64) -> i64 {
        i64::try_from(now_ms).unwrap_or(i64::MAX / 2) + self.offset_s * 1000
    }

    /// Whether `now` is inside a window.
    pub fn inside(&self, now_ms: u64) -> bool {
        let second = self.local_ms(now_ms).div_euclid(1000).rem_euclid(DAY_S);
        self.windows.iter().any(|w| w.contains(second))
    }

    /// Milliseconds until the next window opens (0 when inside one).
    pub fn until_next_ms(&self, now_ms: u64) -> u64 {
        if self.inside(now_ms) {
            return 0;
        }
        let local = self.local_ms(now_ms);
        let into_day_ms = local.rem_euclid(DAY_S * 1000);
        self.windows
            .iter()
            .map(|w| {
                let start_ms = w.start_s * 1000;
                let wait = start_ms - into_day_ms;
                if wait > 0 {
                    wait
                } else {
                    wait + DAY_S * 1000
                }
            })
            .min()
            .map_or(0, |ms| u64::try_from(ms).unwrap_or(0))
    }
}
