//! Waits stated in words inside error messages ("try again in 20s", "请在 5 秒后重试").

use super::*;

/// Phrases that introduce a wait (lowercase). Chinese: "请在 5 秒后重试", "请 30 秒后再试".
pub(super) const STRONG_ANCHORS: &[&str] = &[
    "try again in",
    "try again after",
    "retry again in",
    "retry again after",
    "retry in",
    "retry after",
    "retrying in",
    "retry-after",
    "wait",
    "resets in",
    // Azure API Management's quota policy: "Quota will be replenished in 00:04:12".
    "replenished in",
    "reset in",
    "reset after",
    "请在",
    "请于",
    // "将在 12 分钟后重置" (resets in 12 minutes).
    "将在",
    "將在",
    // pt, es, fr, it, de, id, ru, vi: "Tente novamente em 12 segundos", "Réessayez dans 8
    // secondes", "Silakan coba lagi dalam 15 detik".
    "tente novamente em",
    "tente de novo em",
    "inténtalo de nuevo en",
    "inténtelo de nuevo en",
    "intente de nuevo en",
    "vuelve a intentarlo en",
    "réessayez dans",
    "réessayer dans",
    "riprova tra",
    "riprovare tra",
    "versuchen sie es in",
    "erneut versuchen in",
    "coba lagi dalam",
    "повторите через",
    "попробуйте через",
    "попробуйте снова через",
    "thử lại sau",
    // Wait, in pt, es, fr, it: "Aguarde 15 segundos", "Espere 10 segundos".
    "aguarde",
    "espere",
    "attendez",
    "attendere",
    "请",
    "等待",
    // Try again in, and wait, in nl, sv, no, da, cs, sk, pl, ro, el, hr, sr, sl, bg, uk, ru,
    // he, ar, fa, id, ms, vi, fi, de ("Försök igen om 30 sekunder", "Zkuste to znovu za 20
    // sekund", "Reîncercați peste 20 de secunde", "נסה שוב בעוד 40 שניות").
    "probeer het over",
    "probeer het opnieuw over",
    "wacht",
    "försök igen om",
    "vänta",
    "prøv igjen om",
    "prøv igen om",
    "vent",
    "zkuste to znovu za",
    "zkuste to za",
    "počkejte",
    "skúste to znova o",
    "počkajte",
    "spróbuj ponownie za",
    "odczekaj",
    "poczekaj",
    "reîncercați peste",
    "încercați din nou peste",
    "așteptați",
    "δοκιμάστε ξανά σε",
    "δοκιμάστε ξανά σε περίπου",
    "περιμένετε",
    "pokušajte ponovno za",
    "pokušajte ponovo za",
    "pričekajte",
    "sačekajte",
    "poskusite znova čez",
    "počakajte",
    "опитайте отново след",
    "изчакайте",
    "спробуйте через",
    "спробуйте знову через",
    "зачекайте",
    "подождите",
    "נסה שוב בעוד",
    "נסו שוב בעוד",
    "המתן",
    "حاول مرة أخرى بعد",
    "انتظر",
    "پس از",
    "بعد از",
    "tunggu",
    "cuba lagi dalam",
    "đợi",
    "odota",
    // Finnish puts "after" (kuluttua) last: "Yritä uudelleen 4 tunnin kuluttua".
    "yritä uudelleen",
    "warten sie",
    "bitte warten",
    // A reset or a return in de, es, id, ja: "Zurücksetzung in 7 Minuten", "Reintente en 12
    // segundos", "Akan direset dalam 5 menit", "あと12分でリセットされます".
    "zurücksetzung in",
    "zurückgesetzt in",
    "wieder verfügbar in",
    "reintente en",
    "reintentar en",
    "direset dalam",
    "あと",
];

/// Words that follow a wait in languages that put the wait before "after": Chinese "5 秒后重试",
/// Japanese "1分後に再試行してください", Korean "1분 후 다시 시도해 주세요". The wait counts only
/// when one of [`RESUME_WORDS`] comes soon after, so "5 秒后断开" (disconnects) is no wait.
/// Hungarian, Turkish and Hindi put theirs after the wait too ("2 óra múlva próbálja újra", "30
/// saniye sonra tekrar deneyin", "10 dakika içinde sıfırlanacak", "9 मिनट में रीसेट होगी").
pub(super) const AFTER_MARKERS: &[&str] = &[
    "之后",
    "之後",
    "以后",
    "以後",
    "后",
    "後",
    "후",
    "múlva",
    "sonra",
    "içinde",
    "में",
];

/// Retrying or a reset, right after an [`AFTER_MARKERS`] word.
pub(super) const RESUME_WORDS: &[&str] = &[
    "重试",
    "再试",
    "重新",
    "重置",
    "恢复",
    "重試",
    "再試",
    "恢復",
    "再度",
    "試し",
    "やり直",
    "リセット",
    "回復",
    "解除",
    "다시",
    "재시도",
    "재요청",
    "초기화",
    "해제",
    "리셋",
    // A quota refilled ("クォータは 00:00:38 後に補充されます", Azure API Management in Japanese).
    "补充",
    "補充",
    "충전",
    // Hungarian: try, again, renews; Turkish: again.
    "próbál",
    "újra",
    "megújul",
    "újul",
    "tekrar",
    "yeniden",
    // Reset in Turkish and Hindi.
    "sıfırlan",
    "रीसेट",
];

/// How many characters after the marker a [`RESUME_WORDS`] word may start ("後に再試行",
/// "후에 다시", "后再试").
const RESUME_WINDOW_CHARS: usize = 6;

/// A wait written as "<number><unit> 后/後/후 <retry>" at the start of `s`, in nanoseconds.
pub(super) fn wait_before_after(s: &str) -> Option<u128> {
    let (ns, rest) = clock_duration(s).or_else(|| spoken_parts(s))?;
    let rest = rest.trim_start();
    let after = AFTER_MARKERS.iter().find_map(|m| rest.strip_prefix(m))?;
    let resumes = after
        .char_indices()
        .take(RESUME_WINDOW_CHARS)
        .any(|(i, _)| {
            after
                .get(i..)
                .is_some_and(|t| RESUME_WORDS.iter().any(|w| t.starts_with(w)))
        });
    resumes.then_some(ns)
}

/// Words allowed between an anchor and the number ("wait for about 5 seconds").
pub(super) const FILLERS: &[&str] = &[
    "for ",
    "about ",
    "approximately ",
    "roughly ",
    "at least ",
    "~",
];

/// A word must not start inside another word ("await" is not "wait").
pub(super) fn word_start(text: &str, start: usize) -> bool {
    let prev = text
        .get(..start)
        .and_then(|before| before.chars().next_back());
    !matches!(prev, Some(c) if c.is_ascii_alphanumeric() || c == '_')
}

/// True when position `start` begins a clause: start of text, after punctuation, or "please".
pub(super) fn clause_start(text: &str, start: usize) -> bool {
    let Some(before) = text.get(..start).map(str::trim_end) else {
        return false;
    };
    before.is_empty()
        || before.ends_with("please")
        || before.ends_with(['.', ',', ';', ':', '!', '?', '(', '，', '。', '；', '：'])
}

/// A spoken duration at the start of `s` (after optional whitespace and a filler word), in
/// nanoseconds (saturating).
pub(super) fn spoken_duration(s: &str) -> Option<u128> {
    let mut rest = s.trim_start();
    if let Some(after) = FILLERS.iter().find_map(|f| rest.strip_prefix(f)) {
        rest = after.trim_start();
    }
    // A clock-style duration ("Try again in 11:42:07", Azure API Management's quota policy).
    if let Some((total, _)) = clock_duration(rest) {
        return Some(total);
    }
    spoken_parts(rest).map(|(total, _)| total)
}

/// A duration of one or more parts at the start of `s` ("1m30s", "1 minute 30 seconds", "2 óra
/// 15 perc"), in nanoseconds, and the rest.
fn spoken_parts(s: &str) -> Option<(u128, &str)> {
    let (mut total, mut rest) = spoken_part(s)?;
    loop {
        // Go-style "1m30s" continues directly; "1 minute 30 seconds" / "... and 30 seconds" too.
        let next = rest.trim_start();
        let next = next.strip_prefix("and ").map_or(next, str::trim_start);
        match spoken_part(next) {
            Some((ns, after)) => {
                total = total.saturating_add(ns);
                rest = after;
            }
            None => break,
        }
    }
    Some((total, rest))
}

/// `H:MM:SS` or `HH:MM:SS` at the start of `s`, with .NET's days before a dot (`5.02:11:09`),
/// in nanoseconds, and the rest. Two parts (`05:30`) are not read: minutes and seconds or hours
/// and minutes, nothing says which.
fn clock_duration(s: &str) -> Option<(u128, &str)> {
    let mut parts = s.splitn(3, ':');
    let first = parts.next()?;
    let (days, hours) = match first.split_once('.') {
        Some((d, h)) if (1..=3).contains(&d.len()) && d.bytes().all(|b| b.is_ascii_digit()) => {
            (d.parse::<u128>().ok()?, h)
        }
        Some(_) => return None,
        None => (0, first),
    };
    let minutes = parts.next()?;
    let rest = parts.next()?;
    let seconds_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (seconds, after) = rest.split_at_checked(seconds_len)?;
    let digits = |d: &str, max_len: usize| {
        (1..=max_len).contains(&d.len()) && d.bytes().all(|b| b.is_ascii_digit())
    };
    if !(digits(hours, 2) && minutes.len() == 2 && digits(minutes, 2) && seconds.len() == 2) {
        return None;
    }
    let (h, m, sec): (u128, u128, u128) = (
        hours.parse().ok()?,
        minutes.parse().ok()?,
        seconds.parse().ok()?,
    );
    if m >= 60 || sec >= 60 {
        return None;
    }
    Some(((((days * 24 + h) * 60 + m) * 60 + sec) * NS_PER_S, after))
}

/// `<number>[space]<unit>` at the start of `s`: nanoseconds and the rest.
pub(super) fn spoken_part(s: &str) -> Option<(u128, &str)> {
    let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
    if int_len == 0 {
        return None;
    }
    let mut num_len = int_len;
    if let Some(after_dot) = s.get(int_len..).and_then(|r| r.strip_prefix('.')) {
        let frac_len = after_dot.bytes().take_while(u8::is_ascii_digit).count();
        if frac_len > 0 {
            num_len = int_len + 1 + frac_len;
        }
    }
    let (num, rest) = s.split_at_checked(num_len)?;
    // Romanian puts "de" between a number from twenty up and its unit ("20 de secunde").
    let rest = rest.trim_start();
    let rest = rest.strip_prefix("de ").unwrap_or(rest);
    let (unit_ns, rest) = message_unit(rest)?;
    Some((decimal_ns(num, unit_ns)?, rest))
}

/// A time unit at the start of lowercase `s`: nanoseconds and the rest.
pub(super) fn message_unit(s: &str) -> Option<(u128, &str)> {
    // Chinese (simplified and traditional), Japanese ("1時間", "3日") and Korean ("30초",
    // "1분", "2시간", "1일"). Longer units first: "分钟" before "分".
    const CJK: [(&str, u128); 22] = [
        ("毫秒", NS_PER_MS),
        ("秒钟", NS_PER_S),
        ("秒鐘", NS_PER_S),
        ("秒", NS_PER_S),
        ("分钟", NS_PER_MIN),
        ("分鐘", NS_PER_MIN),
        ("分", NS_PER_MIN),
        ("小时", NS_PER_H),
        ("小時", NS_PER_H),
        ("時間", NS_PER_H),
        ("天", NS_PER_DAY),
        ("日", NS_PER_DAY),
        ("밀리초", NS_PER_MS),
        ("초", NS_PER_S),
        ("분", NS_PER_MIN),
        ("시간", NS_PER_H),
        ("일", NS_PER_DAY),
        ("ミリ秒", NS_PER_MS),
        ("ヶ月", 30 * NS_PER_DAY),
        ("个月", 30 * NS_PER_DAY),
        ("個月", 30 * NS_PER_DAY),
        ("개월", 30 * NS_PER_DAY),
    ];
    // Russian and Vietnamese ("через 12 секунд", "sau 30 giây"), Ukrainian and Bulgarian,
    // Greek, Hebrew, Arabic, Persian, Thai, Hungarian, Romanian, Czech.
    const OTHER: [(&str, u128); 35] = [
        ("секунд", NS_PER_S),
        ("сек", NS_PER_S),
        ("минут", NS_PER_MIN),
        ("мин", NS_PER_MIN),
        ("хвилин", NS_PER_MIN),
        ("годин", NS_PER_H),
        ("час", NS_PER_H),
        ("giây", NS_PER_S),
        ("phút", NS_PER_MIN),
        ("δευτερόλεπτ", NS_PER_S),
        ("λεπτ", NS_PER_MIN),
        ("ώρ", NS_PER_H),
        ("שניות", NS_PER_S),
        ("שנייה", NS_PER_S),
        ("דקות", NS_PER_MIN),
        ("דקה", NS_PER_MIN),
        ("שעות", NS_PER_H),
        ("ثوان", NS_PER_S),
        ("ثانية", NS_PER_S),
        ("ثانیه", NS_PER_S),
        ("دقائق", NS_PER_MIN),
        ("دقيقة", NS_PER_MIN),
        ("دقیقه", NS_PER_MIN),
        ("ساعة", NS_PER_H),
        ("ساعت", NS_PER_H),
        ("วินาที", NS_PER_S),
        ("นาที", NS_PER_MIN),
        ("ชั่วโมง", NS_PER_H),
        ("másodperc", NS_PER_S),
        ("óra", NS_PER_H),
        ("secundă", NS_PER_S),
        ("sekúnd", NS_PER_S),
        // Hindi.
        ("सेकंड", NS_PER_S),
        ("मिनट", NS_PER_MIN),
        ("घंटे", NS_PER_H),
    ];
    if let Some(found) = CJK
        .iter()
        .chain(OTHER.iter())
        .find_map(|(u, ns)| s.strip_prefix(u).map(|rest| (*ns, rest)))
    {
        return Some(found);
    }
    let len = s.bytes().take_while(u8::is_ascii_alphabetic).count();
    let (word, rest) = s.split_at_checked(len)?;
    let ns = match word {
        "ms" | "msec" | "msecs" | "millisecond" | "milliseconds" => NS_PER_MS,
        "s" | "sec" | "secs" | "second" | "seconds" => NS_PER_S,
        "m" | "min" | "mins" | "minute" | "minutes" => NS_PER_MIN,
        "h" | "hr" | "hrs" | "hour" | "hours" => NS_PER_H,
        // "try again in 4 days 2 hours 1 minute" (a plan's usage limit).
        "d" | "day" | "days" => NS_PER_DAY,
        // pt, es, fr, it, de, id, vi ("giây", "phút" are not ASCII: read below).
        "segundo" | "segundos" | "seconde" | "secondes" | "secondo" | "secondi" | "sekunde"
        | "sekunden" | "detik" => NS_PER_S,
        "minuto" | "minutos" | "minuti" | "minuten" | "menit" => NS_PER_MIN,
        // nl, sv, no, da, cs, sk, pl, ro, hr, sr, sl, fi, tr, id, ms, hu.
        "seconden" | "sekund" | "sekunder" | "sekundy" | "sekundu" | "sekundi" | "sekundo"
        | "sekunda" | "secunde" | "sekuntia" | "sekunnin" | "saniye" => NS_PER_S,
        "minuut" | "minuter" | "minutter" | "minut" | "minuty" | "minutu" | "minuta"
        | "minuuttia" | "minuutin" | "dakika" | "perc" | "perces" => NS_PER_MIN,
        "nap" | "napot" | "tag" | "tage" | "tagen" | "hari" => NS_PER_DAY,
        "uur" | "timmar" | "timme" | "timer" | "ure" | "hodin" | "hodiny" | "hodinu" | "ore"
        | "sat" | "sata" | "sati" | "godzin" | "godziny" | "tuntia" | "tunnin" | "jam" => NS_PER_H,
        _ => return None,
    };
    Some((ns, rest))
}

// ---------------------------------------------------------------------------------------------
// JSON bodies
// ---------------------------------------------------------------------------------------------
