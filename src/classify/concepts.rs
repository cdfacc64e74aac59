//! What a message speaks of, read as concepts rather than phrases.
//!
//! A phrase list knows the wordings it was written from; providers keep finding new ones ("your
//! prepaid funds are depleted", "モデルが見つかりません", "잔액이 부족합니다"). Each concept here
//! is a family of words (English, Simplified and Traditional Chinese, Japanese, Korean) and a
//! message shows a class when words of the families that make it up occur **in the same
//! message**: a billing word with a shortage word is a quota stop, a model word with a missing
//! word is a model that is not there, a size word with an excess word (and no rate window) is a
//! prompt too large, a content word with a safety word is a refusal, a capacity word is an
//! overload. The reason names both words, so a surprising verdict can be traced.
//!
//! Words are matched whole (ASCII) or as substrings (CJK, which has no spaces), in messages
//! already lowercased by [`super::evidence::normalize`].

use super::pairs::Pairs;
use super::ErrorClass;
use super::{has_phrase, phrase_offsets, word_offsets};

/// Money and allowances: what runs out when nothing but a payment or a long reset helps.
const BILLING: &[&str] = &[
    "balance",
    "credit",
    "credits",
    "billing",
    "payment",
    "wallet",
    "points",
    "coins",
    "kudos",
    "invoice",
    "invoices",
    "funds",
    "budget",
    "spend",
    "spending",
    "prepaid",
    "top up",
    "top-up",
    "recharge",
    "arrears",
    "subscription",
    "trial",
    "free tier",
    "计费",
    "計費",
    "费用",
    "費用",
    "plan",
    "套餐",
    // 套餐 as Chinese apps translate it ("Your package has been used out, please buy new
    // package").
    "package",
    "订阅",
    "訂閱",
    "プラン",
    "요금제",
    // Charges: "미납 요금으로 인해 ... 일시 정지" (suspended for unpaid charges).
    "요금",
    "余额",
    "餘額",
    "欠费",
    "欠費",
    "积分",
    "積分",
    "剩余次数",
    "剩余额度",
    "钱包",
    "錢包",
    "ポイント",
    "포인트",
    "账单",
    "帳單",
    "請求書",
    "청구서",
    "充值",
    "儲值",
    "额度",
    "額度",
    "点数",
    "残高",
    "クレジット",
    "料金",
    "支払",
    "잔액",
    "크레딧",
    "결제",
    "충전",
    // A limit of spending or use ("결제 한도", "사용한도"); a bare 한도 is any limit ("요청 한도를
    // 초과했습니다": a request rate).
    "결제 한도",
    "결제한도",
    "사용 한도",
    "사용한도",
    "이용 한도",
    "이용한도",
    "지출 한도",
    "크레딧 한도",
    // A budget ("予算上限（月額 ¥300,000）に到達").
    "预算",
    "預算",
    "予算",
    "예산",
    "баланс",
    "средств",
    "оплат",
    "тариф",
    "подписк",
    "кредит",
    "пополн",
    "платёж",
    "платеж",
    // es, pt, fr, de, it, id, tr, vi, pl, uk, th, ar, hi.
    "saldo",
    "solde",
    "crédito",
    "créditos",
    "crédit",
    "crédits",
    "guthaben",
    "kredit",
    "credito",
    "crediti",
    "bakiye",
    "số dư",
    // Payment (vi): "Tài khoản thanh toán ... bị tạm ngưng do chưa thanh toán".
    "thanh toán",
    "dépenses",
    "gastos",
    "presupuesto",
    "orçamento",
    "budżet",
    "кошти",
    // A charge or payment that failed ("信用卡扣款失敗").
    "扣款",
    "付款",
    "信用卡",
    // Funds (pl), credit (tr).
    "środków",
    "srodkow",
    "kredi",
    // Credit (nl), balance (ar).
    "tegoed",
    // A balance or funds in ms, th, fa, uk, pl, cs, ro, hu, el, de, bn, ur, he, sw; a
    // charge owed (vi): "Baki akaun tidak mencukupi", "Nedostatečný zůstatek na účtu".
    "baki",
    "ยอดเงิน",
    "اعتبار",
    "коштів",
    "кошти",
    "środk",
    "zůstat",
    "sold",
    "soldul",
    "egyenleg",
    "υπόλοιπο",
    "guthaben",
    "ব্যালেন্স",
    "بیلنس",
    "יתרה",
    "salio",
    "cước",
    "prepaid",
    "money",
    // Spending (ru), points (ar), an invoice (tr), credit (hi): "Лимит расходов на месяц
    // достигнут", "نفدت النقاط", "Ödenmemiş faturanız", "क्रेडिट ख़त्म".
    "расход",
    "نقاط",
    "fatura",
    "faturanız",
    "क्रेडिट",
    // Payments and bills owed (zh-Hant, de, pl, es, pt, hu): "帳戶尚有未繳款項", "offene
    // Rechnung", "nieopłaconej faktury", "pagos pendientes", "pagamentos em atraso", "havi
    // költségkeret" (a spending cap).
    "款項",
    "繳款",
    "付款",
    "rechnung",
    "zahlungsrückstand",
    "faktura",
    "faktury",
    "fakturę",
    "rachunek",
    "rachunku",
    "non-payment",
    "nonpayment",
    "pago",
    "pagos",
    "pagamento",
    "pagamentos",
    "költségkeret",
    "رصيد",
    // An invoice, a payment (de, fr, es, pt): "Konto wegen offener Rechnungen gesperrt",
    // "suspendu pour cause d'impayé", "suspensa por falta de pagamento".
    "rechnung",
    "rechnungen",
    "zahlung",
    "zahlungen",
    "zahlungsrückstand",
    "facture",
    "facturation",
    "factura",
    "fatura",
    "pago",
    "pagamento",
    "impayé",
    // A prepaid pack of tokens (es, pt, de, ja), a balance and a wallet (fa).
    "token pack",
    "token package",
    "prepago",
    "pré-pago",
    "token-paket",
    "paquete de tokens",
    "pacote de tokens",
    "トークンパック",
    "موجودی",
    "کیف پول",
    // Dues and invoices (ar), balance (hi).
    "مستحقات",
    "فاتورة",
    "الفاتورة",
    "बैलेंस",
    "शेष राशि",
    // A subscription or a package of the plan, in more languages ("资源包已过期",
    // "サブスクリプションの有効期限が切れています", "구독이 만료되었습니다", "Votre abonnement a
    // expiré", "Langganan Anda telah berakhir", "แพ็กเกจของคุณหมดอายุแล้ว").
    "your package",
    "资源包",
    "資源包",
    "サブスクリプション",
    "구독",
    "suscripción",
    "assinatura",
    "abonnement",
    "abbonamento",
    "langganan",
    "gói đăng ký",
    "gói cước",
    "abonelik",
    "aboneliğ",
    "subskrypcja",
    "subskrypcji",
    "subskrypcję",
    "แพ็กเกจ",
    "kifurushi",
    // Balance (tr, inflected) and credit (th).
    "bakiyeniz",
    "bakiyesi",
    "เครดิต",
    // A bill (id: "tagihan belum dibayar").
    "tagihan",
    // A plan, tariff, membership or pass in it, pt/es, cs, vi, ko, zh, hi ("Il tuo piano è scaduto", "会员已到期").
    "piano",
    "plano",
    "tarif",
    "tarifa",
    "předplatné",
    "gói dịch vụ",
    // "Gói của bạn đã hết hạn", "Abonamentul a expirat", "Η συνδρομή σας έληξε",
    // "Az előfizetésed lejárt", "המנוי שלך פג".
    "gói của bạn",
    "abonamentul",
    "συνδρομ",
    "előfizetés",
    "מנוי",
    "이용권",
    "会员",
    "會員",
    "सदस्यता",
    "فواتير",
    // Balance, credits and dues in mr, gu, kn, ml, or, bn, ur and Hinglish.
    "शिल्लक",
    "બેલેન્સ",
    "ಕ್ರೆಡಿಟ್",
    "ക്രെഡിറ്റ്",
    "ବାଲାନ୍ସ",
    "ব্যালেন্স",
    "بیلنس",
    "बकाया",
    // Debt (sw), money (so).
    "deni",
    "lacagta",
    // A charge or an invoice (pt, es).
    "cobrança",
    "cobranza",
    // Balance (so).
    "haraaga",
    // A package (ru), as "package" above.
    "пакет",
];

/// Running out.
const SHORTAGE: &[&str] = &[
    "insufficient",
    "not have enough",
    // "Your free trial has ended".
    "ended",
    "not enough",
    "too low",
    "exhausted",
    "depleted",
    // "the prepaid hours on this key are all spent", "no money left on this token", "nothing
    // left to spend", "the outstanding invoice".
    "all spent",
    // "the neuron budget for today is spent" (a state, not "you have spent $5 of it").
    "is spent",
    "are spent",
    "been spent",
    "no money left",
    "nothing left",
    "outstanding",
    // "All upstream keys in this pool have run dry", "Prepaid package consumed".
    "run dry",
    "ran dry",
    "consumed",
    // Non-native English: "Your package has been used out", "The balance of account is lack".
    "used out",
    "lack",
    "lacking",
    "exceeded",
    "run out",
    "ran out",
    "used up",
    "reached",
    "no remaining",
    // "Your wallet is empty".
    "empty",
    // "out of prepaid tokens", "the weekly spend cap has been met".
    "out of",
    "been met",
    "was met",
    "been hit",
    // "プランでは上限に達しました", "予算上限に到達", "预算已达到上限".
    "達し",
    "到達",
    "到达",
    "达到",
    "達到",
    "overdue",
    "past due",
    "unpaid",
    // Insufficient and unpaid in fa, ar, hi: "موجودی ناکافی", "مستحقات غير مدفوعة".
    "ناکافی",
    "کافی نیست",
    "غير كاف",
    "غير مدفوعة",
    "अपर्याप्त",
    // "Subscription inactive", "your plan was cancelled", "billing is disabled".
    "inactive",
    "not active",
    // Google: "Billing must be enabled for activation of service(s) ...".
    "must be enabled",
    "cancelled",
    "canceled",
    "disabled",
    // "Your prepaid balance is 0.00 USD", "余额为0".
    "0.00",
    "zero",
    "为0",
    "為0",
    "逾期",
    "未付",
    "未支付",
    "未払",
    "미납",
    "연체",
    "suspended",
    "negative",
    "expired",
    "到期",
    "过期",
    "過期",
    "期限切れ",
    "만료",
    "不足",
    "用尽",
    "用盡",
    "用完",
    "耗尽",
    "耗盡",
    "已达",
    "已達",
    "超出",
    "足りません",
    // "クレジットがありません", "크레딧이 없습니다": none left.
    "ありません",
    "없습니다",
    "不足して",
    "도달",
    "부족",
    "초과",
    "소진",
    // "크레딧을 모두 사용했습니다": all of it used.
    "모두 사용",
    "다 사용",
    "недостаточно",
    "закончил",
    "исчерпан",
    "отрицательн",
    "истек",
    "истёк",
    "превышен",
    "просроч",
    "неактив",
    // es, pt, fr, de, it, id, tr, vi, pl, uk, th, ar, hi.
    "insuficiente",
    "insuficientes",
    "insuffisant",
    "insuffisants",
    "unzureichend",
    "nicht ausreichend",
    "insufficiente",
    "tidak cukup",
    "tidak mencukupi",
    "به پایان رسید",
    "yetersiz",
    "không đủ",
    "недостатньо",
    "niewystarczając",
    "agotado",
    "esgotado",
    "épuisé",
    "aufgebraucht",
    // Used up, insufficient (nl); insufficient (ar: "رصيدك غير كافٍ").
    "verbruikt",
    "opgebruikt",
    "onvoldoende",
    "غير كاف",
    "esaurito",
    "habis",
    "tükendi",
    "dùng hết",
    "вичерпан",
    // Suspended or declined ("訂閱已暫停", "결제 수단이 거부되어"); a capacity saturated.
    "declined",
    "暂停",
    "暫停",
    // Paused (ko): "구독이 일시 정지되었습니다".
    "일시 정지",
    // Suspended, unpaid (vi): "bị tạm ngưng do chưa thanh toán".
    "tạm ngưng",
    "chưa thanh toán",
    "거부",
    "중지",
    "saturated",
    "饱和",
    "飽和",
    // Ran out, in more inflections (pt, es, it, fr, pl).
    "acabaram",
    "acabou",
    "esgotados",
    "esgotadas",
    "agotados",
    "agotadas",
    "esauriti",
    "esaurite",
    "épuisés",
    "épuisée",
    "brak wystarczając",
    // Lacking or used up in pl, da/no, tl, sw, fa ("Brak środków na koncie", "Din saldo er
    // opbrugt", "Ubos na ang iyong credits", "Salio lako limeisha").
    "brak",
    "opbrugt",
    "oppbrukt",
    // Exhausted and exceeded in de, fr, it ("Freikontingent ausgeschöpft", "votre organisation a
    // dépassé son budget de dépenses mensuel").
    "ausgeschöpft",
    "dépassé",
    "superato",
    "brukt opp",
    "ubos",
    "limeisha",
    "تمام شده",
    // Locked, suspended, unpaid, overdue, a lack of (de, fr, es, pt).
    "gesperrt",
    "deaktiviert",
    "überfällig",
    "ausstehend",
    "suspendu",
    "suspendue",
    "impayé",
    "suspendida",
    "suspendido",
    "suspensa",
    "suspenso",
    "falta de",
    // Expired or ended, in ja, es, pt, fr, de, it, id, vi, tr, th, pl (a billing word beside).
    "期限が切れ",
    "vencido",
    "vencida",
    "venció",
    "expirado",
    "expirada",
    "expirou",
    "expiré",
    "expirée",
    "abgelaufen",
    "scaduto",
    "scaduta",
    "telah berakhir",
    "kedaluwarsa",
    "hết hạn",
    "süresi doldu",
    "หมดอายุ",
    "wygasł",
    // Ran out (th), insufficient (tr).
    "หมดแล้ว",
    "yetersiz",
    // Unpaid (id).
    "belum dibayar",
    // "auth no enough license" (iFlytek), "your prepaid balance is 0 minutes".
    "no enough",
    "is 0",
    "of 0",
    // Unpaid (ar), expired (cs), ended (hi), suspended (ja).
    "عدم سداد",
    "vypršel",
    "vypršela",
    "vypršelo",
    "समाप्त",
    "一時停止",
    // Insufficient or owed in vi, th, cs, ro, hu, el, de, sv, fi, bn, he, sw ("Tài khoản của
    // bạn đang nợ cước", "Nicht genügend Guthaben", "Salio lako halitoshi").
    "nợ",
    "ไม่เพียงพอ",
    "nedostateč",
    "insuficient",
    "elegendő",
    "ανεπαρκ",
    "nicht genügend",
    "nicht genug",
    "otillräckl",
    "ei riitä",
    "পর্যাপ্ত",
    "אין מספיק",
    "halitoshi",
    "haitoshi",
    "未繳",
    "غير مسدد",
    "nieopłacon",
    "offene",
    "pendiente",
    "pendientes",
    "em atraso",
    "en mora",
    "elérte",
    // Empty, not enough, ran out, reached, unpaid (zh, th, hi, ar, ru, tr).
    "空了",
    "ไม่พอ",
    "ख़त्म",
    "खत्म",
    "نفد",
    "достигнут",
    "ödenmemiş",
    // Insufficient, used up or finished in mr, gu, kn, ml, or, bn, ur and Hinglish.
    "अपुरी",
    "अपुरा",
    "પૂરી થઈ",
    "ಮುಗಿದಿದೆ",
    "ಮುಗಿದಿವೆ",
    "തീർന്നു",
    "ଅପର୍ଯ୍ୟାପ୍ତ",
    "শেষ",
    "ختم",
    "ناکافی",
    "khatam",
    "khatm",
    // Finished or unpaid in mn, so, sw.
    "дууссан",
    "dhammaatay",
    "halijalipwa",
    "haijalipwa",
    // Without a balance or credit, a subscription inactive, a charge pending, a payment problem
    // (pt, es, en: "Contrato sem saldo de créditos", "Assinatura inativa. Regularize a cobrança
    // pendente", "problema con el método de pago").
    "sem saldo",
    "sin saldo",
    "sem crédito",
    "sem créditos",
    "sin crédito",
    "sin créditos",
    "inativa",
    "inactiva",
    "pendente",
    "payment issue",
    "payment problem",
    "problema con el método de pago",
    "problema com o método de pagamento",
    // Ended (ru).
    "завершён",
    "период завершен",
    // Finished (sv), overdue (pl), not enough (so).
    "är slut",
    "zaległ",
    "kuma filna",
];

/// What a model is called.
const MODEL: &[&str] = &[
    "model",
    "models",
    "deployment",
    // A fine-tune served on a base model: "Loading lora x failed: No adapter found for ...".
    "adapter",
    // Stability's and OpenAI's older word: "engine x not found or has been retired".
    "engine",
    "模型",
    "モデル",
    "모델",
    "модел",
    // es, pt, fr, de, it, id, tr, vi, pl, uk, th, ar, hi.
    "modelo",
    "modelos",
    "modèle",
    "modello",
    "modelli",
    "modell",
    "modelle",
    "modeli",
    "modelu",
    "mô hình",
    "моделі",
    "โมเดล",
    "النموذج",
    "मॉडल",
    // el, he (other scripts: no scan of an ASCII message pays for them).
    "μοντέλο",
    "המודל",
    // fa, ur, bn, ta, am.
    "مدل",
    "ماڈل",
    "মডেল",
    "மாடல்",
    "ሞዴል",
    // A model in mr, gu, kn, ml, or.
    "मॉडेल",
    "મોડેલ",
    "ಮಾದರಿ",
    "ಮಾಡೆಲ್",
    "മോഡൽ",
    "ମଡେଲ",
    // Model in xh/zu, rw, ne, si, lo, my.
    "imodeli",
    "moderi",
    "मोडेल",
    "මාදිලිය",
    "ໂມເດວ",
    "မော်ဒယ်",
    // Model in hy, ka.
    "մոդել",
    "მოდელ",
];

/// More languages' words for a model (sv/no/da definite, ro, fi, el, bn, mr, tr), asked only
/// of a 404 or 410, whose status already says what is missing: kept out of [`MODEL`], which
/// every concept near a model scans.
const MODEL_MORE: &[&str] = &[
    "modellen",
    "modelul",
    "malli",
    "mallia",
    "mallin",
    "modelin",
    "μοντέλο",
    "μοντέλου",
    "মডেল",
    "मॉडेल",
    // A model in he, fa.
    "המודל",
    "מודל",
    "مدل",
    "مدلی",
];

/// A model named in another language ("模型", "モデル", "모델", "модель"): the words of
/// [`MODEL`] that are not English.
pub fn model_word_in(message: &str) -> bool {
    !message.is_ascii() && MODEL.iter().any(|w| !w.is_ascii() && message.contains(w))
}

/// Whether a message calls something a model, in any language of [`MODEL`] or [`MODEL_MORE`],
/// as a word ("Modellen 'x' hittades inte", "Το μοντέλο 'x' δεν βρέθηκε"). "models" is left
/// out: in a path (`/v1/models/x/chat`) it names a URL, not a model.
pub fn model_word_as_word_in(message: &str) -> bool {
    super::pairs::with(message, |held| {
        candidates(message, MODEL)
            .chain(candidates(message, MODEL_MORE))
            .filter(|w| *w != "models")
            .any(|w| held.may_hold(w) && word_offsets(message, w).next().is_some())
    })
}

/// How model names begin ("gpt-4o", "claude-3-5-sonnet", "meta-llama/llama-3.1-8b",
/// "qwen2.5:7b"): the families a message may name a model by without the word "model".
const MODEL_FAMILIES: &[&str] = &[
    "gpt-",
    "claude-",
    "gemini-",
    "gemma",
    "llama",
    "qwen",
    "deepseek-",
    "mistral-",
    "mixtral-",
    "codestral",
    "glm-",
    "ernie-",
    "moonshot-",
    "kimi-",
    "grok-",
    "command-r",
    "doubao-",
    "hunyuan-",
    "minimax-",
    "phi-",
    // More families, open and closed, of the model lists providers publish.
    "codellama",
    "command-",
    "jamba-",
    "j2-",
    "o1-",
    "o3-",
    "o4-",
    "dall-e-",
    "whisper-",
    "text-embedding-",
    "text-bison",
    "chat-bison",
    "titan-",
    "nova-",
    "ministral-",
    "pixtral-",
    "magistral-",
    "devstral-",
    "nemotron",
    "granite-",
    "olmo-",
    "falcon-",
    "yi-",
    "baichuan",
    "internlm",
    "starcoder",
    "sonar-",
    "voyage-",
    "imagen-",
    "veo-",
    "chatglm",
    "qwq-",
    "llava",
    "gigachat",
    "yandexgpt",
    "sabia-",
    "aya-",
    "exaone",
    "hcx-",
];

/// The model a message names by its id ("Your plan does not include access to gpt-4o"): a
/// word that begins with a model family and carries a version or variant (a digit or a
/// hyphen past the family's name), so that "the Llama family" is not an id.
pub fn model_id_in(message: &str) -> Option<&str> {
    let named = super::pairs::with(message, |held| {
        MODEL_FAMILIES.iter().any(|f| {
            let family = f.trim_end_matches('-');
            held.may_hold(family) && message.contains(family)
        })
    });
    if !named {
        return None;
    }
    message
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | ':' | '/')))
        .flat_map(|word| word.rsplit('/').next())
        .flat_map(vendor_suffixes)
        .find(|id| {
            MODEL_FAMILIES.iter().any(|f| {
                id.strip_prefix(f).is_some_and(|rest| {
                    f.ends_with('-') && !rest.is_empty()
                        || rest.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == ':')
                })
            })
        })
}

/// A word and what follows each vendor's dot in it: Bedrock's and OCI's ids put the vendor
/// first ("cohere.command-r-16k", "us.anthropic.claude-3-7-sonnet-20250219-v1:0"). A dot after
/// a digit is a version ("gpt-4.1"), not a vendor's.
fn vendor_suffixes(word: &str) -> impl Iterator<Item = &str> {
    let dots = word.match_indices('.').filter_map(move |(i, _)| {
        let after_letter = i
            .checked_sub(1)
            .and_then(|p| word.as_bytes().get(p))
            .is_some_and(u8::is_ascii_alphabetic);
        after_letter.then(|| word.get(i + 1..)).flatten()
    });
    std::iter::once(word).chain(dots)
}

/// Not there, or not for this caller.
const MISSING: &[&str] = &[
    "not found",
    "cannot be found",
    "could not be found",
    "no adapter found",
    "no deployment named",
    "no deployed models",
    "no models are loaded",
    "no models are currently loaded",
    // "model 'x' is not one of the models this engine was created with" (MLC).
    "not one of the models",
    // An embedding or rerank model asked to chat.
    "not a chat model",
    "does not exist",
    "not exist",
    "no such",
    // Not "unknown" or "invalid" alone: "Unknown parameter: 'model_config'" is a bad request.
    "unknown model",
    "invalid model",
    "not a valid model",
    "model is invalid",
    "model is not valid",
    // "The provided model identifier is invalid" (a model word must be near).
    "is invalid",
    "not available",
    "unavailable for",
    "no access",
    "not have access",
    "not enabled",
    "not activated",
    "deprecated",
    "decommissioned",
    "retired",
    "discontinued",
    // Discontinued, not enabled, not activated, no access in pt/es, de, vi.
    "descontinuado",
    "descontinuada",
    "nicht freigeschaltet",
    "chưa được kích hoạt",
    "no tiene acceso",
    "não tem acesso",
    "fade out",
    "faded out",
    "sunset",
    "end of life",
    "end of its life",
    "no longer",
    "shut down",
    "been removed",
    // "The model deepseek-r1-250120 has been offline" (Coze), "taken offline".
    "offline",
    // "Model x is not served by this endpoint", "No provider available for model x".
    "not served",
    // "Model x is not servable in region europe-west4" (Vertex).
    "not servable",
    "no provider",
    "no providers",
    // "unknown provider for model x": the gateway routes the model nowhere.
    "unknown provider",
    "model not supported",
    "model is not supported",
    "unsupported model",
    "not a supported model",
    // "Model name must be one of [...]": the model asked is not among those served.
    "must be one of",
    // "The supported API model names are deepseek-chat or deepseek-reasoner, but you passed x".
    "model names are",
    "supported models are",
    // Not loaded here (yet): "Loading model", "model is currently loading", "no models loaded".
    "loading",
    "not loaded",
    // LM Studio: "Model unloaded."
    "unloaded",
    // "Cold start: weights for x are being pulled onto a GPU", "model 'x' is not installed on
    // this server", "'x' is in closed beta".
    "cold start",
    "being pulled",
    "not installed",
    "not pulled",
    "not downloaded",
    "closed beta",
    "private beta",
    "private preview",
    "no models loaded",
    "no model is loaded",
    "not been loaded",
    "being loaded",
    "not allowed to use",
    "not allowed to access",
    "not allowed to sample",
    "not allowed to generate",
    // "finetuned model with name x is not ready for serving", "model is not ready".
    "not ready",
    "warming up",
    "load failed",
    "load error",
    // LocalAI: "could not load model: rpc error: ...".
    "could not load",
    "failed to load",
    "unable to load",
    "no model loaded",
    "disabled",
    // Too big for this server: "The model x is too large to be loaded automatically (360GB >
    // 10GB)" (Hugging Face's serverless API). Another model serves. (Ollama's "model requires
    // more system memory than is available" is this host's load: the corpus reads it so.)
    "to be loaded",
    "enable this model",
    "enable the model",
    "under maintenance",
    "维护中",
    "維護中",
    "メンテナンス中",
    "점검 중",
    "不存在",
    "未开通",
    "未開通",
    "已下线",
    // Not yet launched: "模型 deepseek-v4 尚未上线".
    "未上线",
    "未上線",
    "已下線",
    "下架",
    "不可用",
    "利用できません",
    // The polite form: "ご指定のモデル gemini-ultra はご利用いただけません".
    "利用いただけません",
    "사용할 수 없",
    "找不到",
    "未开放",
    "未開放",
    "지원하지 않",
    "サポートされていません",
    "サポートされていない",
    "not deployed",
    // "不支持的模型", "无效的模型", "模型名称错误", "該模型已停用", "더 이상 지원되지 않습니다".
    "不支持",
    "无效的模型",
    "無效的模型",
    "模型无效",
    "模型無效",
    "名称错误",
    "名稱錯誤",
    "停用",
    "지원되지 않",
    // A relay that has no price or route for the model ("模型 x 倍率或价格未配置").
    "not configured",
    "未配置",
    "未設定",
    "未找到",
    "没有找到",
    "沒有找到",
    "見つかりません",
    "存在しません",
    "찾을 수 없",
    "존재하지 않",
    "не найден",
    "не существует",
    "недоступн",
    "устарел",
    "отключен",
    "не поддерживается",
    // No longer supported, switched off, not enabled or not found in uk, id, bn, ar, ur, ta, am,
    // ja, de and plain English ("Ця модель більше не підтримується", "Model ini sudah tidak
    // didukung lagi", "That model has been switched off", "We stopped hosting that model",
    // "Modell wird noch geladen", "このモデルは...有効化されていません").
    "не підтримується",
    "tidak didukung",
    "সমর্থিত নয়",
    "تم إيقاف",
    "دستیاب نہیں",
    "கிடைக்கவில்லை",
    "አልተገኘም",
    "有効化されていません",
    "noch geladen",
    "switched off",
    "stopped hosting",
    "has been deleted",
    "not offered",
    // "The provider doesn't recognise the model", "isn't switched on for this project".
    "does not recognise",
    "does not recognize",
    "not switched on",
    // "model gated, request access", "model withdrawn", "bad model name".
    "gated",
    "withdrawn",
    "bad model",
    // es, pt, fr, de, it, id, tr, vi, pl, uk, th, ar, hi: not found, retired, loading.
    "n'existe pas",
    "introuvable",
    "non trovato",
    "non è stato trovato",
    "non esiste",
    "no existe",
    "no encontrado",
    "no se encontró",
    "não existe",
    "não encontrado",
    "não foi encontrado",
    "nicht gefunden",
    "existiert nicht",
    "nicht verfügbar",
    "nicht geladen",
    "không tồn tại",
    "không tìm thấy",
    "غير موجود",
    "nie istnieje",
    "nie znaleziono",
    "tidak ditemukan",
    "bulunamadı",
    "mevcut değil",
    "지원이 종료",
    "지원 종료",
    "ไม่พบ",
    "नहीं मिला",
    "не знайдено",
    "не існує",
    "недоступна",
    "retirado",
    "retirada",
    "obsoleto",
    "obsolète",
    "a été retiré",
    "eingestellt",
    "dismesso",
    "yükleniyor",
    "cargando",
    "carregando",
    "en cours de chargement",
    "wird geladen",
    "in caricamento",
    // Loading, deprecated, no longer served, not enabled, not deployed (it, fr, uk, de, da, cs):
    // "Il modello è in fase di caricamento", "Ce modèle a été déprécié ... n'est plus servi",
    // "Модель ще завантажується", "ist in dieser Umgebung nicht bereitgestellt", "Du har ikke
    // adgang til denne model", "Model není v tomto regionu dostupný".
    "fase di caricamento",
    "déprécié",
    "dépréciée",
    "n'est plus servi",
    "n'est pas activé",
    "завантажується",
    "nicht bereitgestellt",
    "ikke adgang til",
    "není v tomto regionu",
    "đang tải",
    "загружается",
    "sedang dimuat",
    // Loading or not available, in pt, vi, es, fr, it, pl, tr.
    "carregado",
    "sendo carregado",
    "đang được tải",
    "no está disponible",
    "não está disponível",
    "n'est pas disponible",
    // No longer available, not enabled (pt, es, fr, de).
    "não está mais disponível",
    "ya no está disponible",
    "n'est plus disponible",
    "nicht mehr verfügbar",
    "no está habilitado",
    "não está habilitado",
    "non è abilitato",
    "non è disponibile",
    "non è più disponibile",
    "nie jest dostępny",
    "kullanılamıyor",
    // Phased out, no longer or not available, not there (nl, ar).
    "uitgefaseerd",
    "niet meer beschikbaar",
    "niet beschikbaar",
    "bestaat niet",
    "niet gevonden",
    "غير متوفر",
    "تم إيقافه",
    // Taken out of use, not available (he); not yet enabled (id).
    "הוצא משימוש",
    "אינו זמין",
    "belum diaktifkan",
    // Not found or not there in ro, el, hu, fi, sv, cs, he ("Model nu a fost găsit", "Το
    // μοντέλο δεν βρέθηκε", "A modell nem található").
    "nu a fost găsit",
    "nu există",
    "δεν βρέθηκε",
    "δεν υπάρχει",
    "nem található",
    "nem létezik",
    "ei löytynyt",
    "hittades inte",
    "finns inte",
    "nebyl nalezen",
    "neexistuje",
    "לא נמצא",
    // Not enabled (he), taken out of use (tr), not usable (fa): "המודל אינו מופעל עבור הפרויקט
    // שלך", "Bu model kullanımdan kaldırıldı".
    "אינו מופעל",
    "אינה מופעלת",
    "kullanımdan kaldırıldı",
    // Not in the list of models one may use; being deployed (zh): "不在可用模型列表中",
    // "模型 glm-4-plus 正在部署中".
    "不在可用模型",
    "正在部署",
    "kullanımdan kaldırılmıştır",
    "امکان‌پذیر نیست",
    "امکان پذیر نیست",
    // Not found in xh, zu, rw, ne, si, lo.
    "ayifumanekanga",
    "ayitholakalanga",
    "ntiyabonetse",
    "फेला परेन",
    "සොයාගත නොහැක",
    "ບໍ່ພົບ",
    // Not available (es, pt), unless for now (FOR_NOW).
    "no disponible",
    "não disponível",
    "indisponível",
    // Not found in hy, ka.
    "չի գտնվել",
    "ვერ მოიძებნა",
    // Removed from use (fi).
    "poistettu käytöstä",
];

/// What is too large when a prompt does not fit.
const SIZE: &[&str] = &[
    "context",
    "prompt",
    "input",
    "tokens",
    "token",
    "length",
    // "too many total text bytes: 10000002 > 9000000" (Bedrock); not the bytes of one image
    // ("media exceeds size limit: max 10485760 bytes" is a bad request: shrink the image).
    "text bytes",
    "长度",
    "長度",
    "長さ",
    "길이",
    "text",
    "文本",
    "文字",
    "字数",
    "字數",
    "テキスト",
    "텍스트",
    "上下文",
    "輸入",
    "输入",
    "コンテキスト",
    "入力",
    "トークン",
    // "This conversation is too long, please start a new one".
    "conversation",
    "对话",
    "對話",
    "会話",
    "대화",
    "컨텍스트",
    "입력",
    "토큰",
    "контекст",
    "токен",
    "длин",
    "вход",
    // es, pt, fr, de, it, id, tr, vi, pl, uk, th, ar, hi.
    "contexto",
    "contexte",
    "kontext",
    "kontextfenster",
    // Context length in no, da ("maksimale kontekstlengde").
    "kontekstlengde",
    "kontekstlængde",
    "contesto",
    "konteks",
    "bağlam",
    "ngữ cảnh",
    "संदर्भ",
    "eingabetokens",
    // Hindi.
    "टोकन",
    // Context (pl).
    "kontekst",
    "kontekstu",
    // The prompt in Japanese, Korean, Chinese.
    "プロンプト",
    "프롬프트",
    "提示词",
    "提示詞",
    // Context, input and tokens in el, cs, sk, hu, ro, sv, nl, fa, he, bn, ta, sw and more ar, hi,
    // th, ru, uk.
    "πλαίσιο",
    "εισόδου",
    "kontextu",
    "kontextus",
    "bemenet",
    "contextului",
    "kontextfönster",
    "είσοδος",
    "kontekstin",
    "syöte",
    // Compounds of context in sv, nl, de, da/no: "kontextgräns", "contextlengte".
    "kontextgräns",
    "kontextlängd",
    "contextlengte",
    "contextvenster",
    "contextlimiet",
    "kontextlänge",
    "kontextgrenze",
    "kontekstvindu",
    "kontekstvindue",
    "زمینه",
    "ورودی",
    "توکن",
    // Context, with and without its article ("سعة سياق النموذج").
    "سياق",
    "الإدخال",
    "رموز",
    "הקשר",
    "טוקנים",
    "קלט",
    "প্রসঙ্গ",
    "ইনপুট",
    "টোকেন",
    "சூழல்",
    "உள்ளீடு",
    "டோக்கன்",
    "บริบท",
    "อินพุต",
    "โทเค็น",
    "इनपुट",
    // Context in sl, hr, sr, bg.
    "konteksta",
    // A conversation in es, pt, de, it, id, tr, vi, ru, pl, hi ("La conversación es demasiado
    // larga para el modelo").
    "conversación",
    "conversa",
    "unterhaltung",
    "konversation",
    "conversazione",
    "percakapan",
    "konuşma",
    "cuộc trò chuyện",
    "диалог",
    "разговор",
    "rozmowa",
    "बातचीत",
    // Length in it, es, pt, fr, de, tr, vi, pl, ar, hi, th ("supera la lunghezza massima").
    "lunghezza",
    "longitud",
    "comprimento",
    "longueur",
    "eingabelänge",
    "uzunluğu",
    "độ dài",
    "długość",
    "طول",
    "लंबाई",
    "ความยาว",
    // A conversation or prompt in nl/af, cs, hu, fi, el, sw, tl, he, ar, fa/ur, uk, ms, bn, am
    // ("Het gesprek is te lang voor dit model", "Keskustelu on liian pitkä mallille").
    "gesprek",
    "konverzace",
    "beszélgetés",
    "keskustelu",
    "συνομιλία",
    "mazungumzo",
    "usapan",
    "שיחה",
    "محادثة",
    "گفتگو",
    "розмова",
    "gesaan",
    "প্রম্পট",
    "ውይይ",
    "сұрау",
    "this chat",
    // Terse lines: "ctx 8192 exceeded", "n_ctx exceeded", "history too long", "chat history
    // exceeds window".
    "ctx",
    "n_ctx",
    "history",
    // Context in km, am, hy, ka, si, lo, te, ta, pa.
    "បរិបទ",
    "አውድ",
    "համատեքստ",
    "კონტექსტ",
    "සන්දර්භ",
    "ບໍລິບົດ",
    "సందర్భ",
    "சூழல்",
    "ਪ੍ਰਸੰਗ",
    // Text and chat history in it, es/pt, fr, pl/nl, de.
    "testo",
    "texto",
    "texte",
    "tekst",
    "chatverlauf",
    // Context, input and length in mr, gu, kn, ml, or, bn, ur and Hinglish.
    "સંદર્ભ",
    "ಸಂದರ್ಭ",
    "സന്ദർഭ",
    "ସନ୍ଦର୍ଭ",
    "প্রসঙ্গ",
    "ইনপুট",
    "ಇನ್‌ಪುಟ್",
    "ഇൻപുട്ട്",
    "ଇନପୁଟ",
    "ان پٹ",
    "لمبائی",
    "ପ୍ରମ୍ପ୍ଟ",
    "conversation bahut",
    // A context window (nl, no, pl), input tokens (de).
    "kontekstowego",
    "eingabetoken",
];

/// Too much of it.
const EXCESS: &[&str] = &[
    "too long",
    "too large",
    "too many",
    "exceed",
    "exceeds",
    "exceeded",
    "exceeding",
    "longer than",
    "larger than",
    // "contains (35490) tokens, which is more than the max tokens limit allowed" (Gemini); not
    // "more than" alone: "must contain more than one message" is a lower bound.
    "more than the max",
    "more than max",
    "more than the allowed",
    "more than allowed",
    // Not "greater than" alone: "Content length must be greater than 0" is a lower bound.
    "is greater than",
    "must be less than",
    "should be less than",
    "must be <=",
    "must be <",
    "less than or equal",
    // "Requested 150000 tokens, but the model's limit is 128000".
    "limit is",
    "超长",
    "超長",
    "maximum",
    "over the limit",
    "超出",
    "超过",
    "超過",
    "过长",
    "過長",
    "太长",
    "上限",
    "超え",
    "초과",
    "長すぎ",
    "大きすぎ",
    "너무 길",
    "너무 깁",
    "太長",
    "превыш",
    "слишком длин",
    "слишком больш",
    "максимальн",
    // es, pt, fr, de, it, id, tr, vi, pl, uk, th, ar, hi.
    "muito longo",
    "demasiado largo",
    "demasiado larga",
    "trop long",
    "zu lang",
    "troppo lungo",
    "terlalu panjang",
    "çok uzun",
    "quá dài",
    "excede",
    "excède",
    "dépasse",
    "überschreitet",
    "supera",
    "melebihi",
    "aşıyor",
    "vượt quá",
    "перевищ",
    "przekracza",
    // "Długość kontekstu przekroczona" (pl: exceeded).
    "przekroczona",
    "przekroczony",
    "przekroczono",
    "से अधिक",
    "เกิน",
    // Maximum in es, pt, fr, de, it, id, tr, vi, pl, uk, th, ar, hi.
    "tối đa",
    "máximo",
    "máxima",
    "maximale",
    "massima",
    "massimo",
    "maksimum",
    "maksymaln",
    "अधिकतम",
    // Exceeded and maximum in more inflections (pt, it, fr, pl, es, de, tr, vi, ru).
    "excedido",
    "excedida",
    // Portuguese "ultrapassa o limite de contexto do modelo".
    "ultrapassa",
    "ultrapassou",
    "superata",
    "superato",
    "superati",
    "dépassée",
    "dépassé",
    "maksymalna",
    // Too long and exceeds in el, cs, sk, hu, ro, sv, nl, fa, he, bn, ta, sw and more ar, hi, th,
    // ru, uk.
    "túl hosszú",
    "meghaladja",
    // Exceeds in de (inflected), da/no, sv, hu ("übersteigt das Kontextfenster", "Inndata
    // overskrider modellens maksimale kontekstlengde", "túllépi a modell kontextusablakát"),
    // and too long in da/no.
    "übersteigt",
    "overskrider",
    "överskrider",
    "túllépi",
    "for lang",
    "příliš dlouh",
    "překračuje",
    "príliš dlh",
    "prea lung",
    "depășește",
    "för lång",
    "överskrider",
    "te lang",
    "overschrijdt",
    "πολύ μεγάλ",
    "πολύ μακρ",
    "υπερβαίνει",
    "ylittää",
    "ארוך מדי",
    "ארוכה מדי",
    "חורג",
    "طويل جدا",
    "يتجاوز",
    "يتخطى",
    "تتجاوز",
    "بیش از حد",
    "طولانی",
    "অতিক্রম",
    "দীর্ঘ",
    "மிக நீள",
    "மீறு",
    "ยาวเกินไป",
    "बहुत लंबा",
    // Exceeds in sl, hr, sr, bg.
    "presega",
    "premašuje",
    "prekoračuje",
    "превишава",
    // "That's too much text!", "too big for the AI to read at once".
    "too much",
    "too big",
    // "the prompt (5,611 tokens) does not fit in the 4,096-token context", "61k tokens; this
    // model accepts at most 32k per request".
    "does not fit",
    "accepts at most",
    // "would be 140212 tokens, over the 128000 window".
    "over the",
    // Too long in pl, it, fr, fi, af, sw, tl, kk, uk, ar, ur, am; too many (ru, for tokens).
    "zbyt dług",
    "troppo lunga",
    "trop longue",
    "liian pitkä",
    "te lank",
    "marefu mno",
    "masyadong mahaba",
    "тым ұзын",
    "занадто довг",
    "طويلة جدا",
    "زیادہ طویل",
    "በጣም ረጅም",
    "слишком много",
    // Full (zh: "会话上下文已满"), the maximum (fa), and plain English ("The input has more tokens
    // than this model accepts", "more than the model can keep in mind at once", "don't fit in
    // the 12,288 the model can hold", "This chat has gotten too long to keep going").
    "已满",
    "已滿",
    "حداکثر",
    "more tokens than",
    "more than the model",
    "more than this model",
    "the model can hold",
    "do not fit",
    "too long to keep",
    // "won't fit in my memory", "more than I can read in one go", "longer than this model can
    // take in", "too big for this model".
    "will not fit",
    "in one go",
    "longer than this model",
    "longer than the model",
    "too big for this model",
    "too big for the model",
    // "context overflow".
    "overflow",
    // Too long and exceeds in mn, kk, km, lo, my, ha, zu, uz, az, hy, ka, si, ta, te.
    "хэт урт",
    "хэтэрсэн",
    "асып",
    "асты",
    "លើស",
    "ເກີນ",
    "ကျော်",
    "wuce",
    "idlula",
    "oshib",
    "aşır",
    "գերազանց",
    "აღემატება",
    "გადააჭარბ",
    "ඉක්මවා",
    "மீறு",
    "మించి",
    // Too long and does not fit in pt, pl, es, fr, de, it, nl, pl.
    "longo demais",
    "longa demais",
    "grande demais",
    "za długa",
    "za długi",
    "zbyt długa",
    "zbyt długi",
    "no cabe",
    "não cabe",
    "ne tient pas",
    "passt nicht",
    "passen nicht",
    "non entra",
    "past niet",
    "passen niet",
    "nie mieści",
    // Longer, exceeds, above the maximum in mr, gu, kn, ml, or, bn, ur and Hinglish.
    "खूप मोठे",
    "लांब",
    "કરતાં લાંબો",
    "લાંબો",
    "મહત્તમ",
    "ಗರಿಷ್ಠ",
    "മീറി",
    "പരമാവധി",
    "ଅତ୍ୟଧିକ ଲମ୍ବା",
    "ସର୍ବାଧିକ",
    "অতিক্রম",
    "زیادہ سے زیادہ",
    "lambi ho gayi",
    "se zyada",
    // Exceeds in ka.
    "აჭარბებს",
    // Exceeded (nl, no).
    "overschreden",
];

/// Words of a rate window: a limit per minute is a rate limit, whatever grew too large.
const RATE_WINDOW: &[&str] = &[
    "per min",
    "per minute",
    "per-minute",
    "per_minute",
    "per second",
    "per-second",
    "per_second",
    "rate limit",
    "rate-limit",
    // "您的速率达到上限" (your rate reached its ceiling): a rate, so no refusal or size is read
    // from it.
    "速率",
    "rate limited",
    "rate-limited",
    "rate_limited",
    "tpm",
    "rpm",
    "qps",
    "per day",
    "daily",
    "per hour",
    "每分钟",
    "每分鐘",
    "毎分",
    "분당",
    // A wait helps: "too many tokens, please wait before trying again".
    "wait",
    "slow down",
    "throttled",
    "throttling",
    "burst limit",
    // "token rate exceeded".
    "rate exceeded",
    "last minute",
];

/// Permission words: "permission denied ... (or it may not exist)" is about the caller's rights,
/// not about a model that is gone.
const PERMISSION: &[&str] = &[
    "permission",
    "denied",
    "forbidden",
    "unauthorized",
    "not authorized",
    "权限",
    "權限",
    "権限",
    "권한",
];

/// What a refusal is about.
const CONTENT: &[&str] = &[
    "content",
    "text",
    // "可能包含敏感词" (may contain sensitive words), "banned words".
    "words",
    "词",
    "詞",
    "image",
    "文本",
    "输入",
    "輸入",
    "输出",
    "輸出",
    "提示词",
    "图片",
    "圖片",
    "テキスト",
    "画像",
    "텍스트",
    "이미지",
    "prompt",
    "prompts",
    "input",
    "inputs",
    "output",
    "outputs",
    "images",
    "video",
    "videos",
    "audio",
    "视频",
    "動画",
    "영상",
    "material",
    "message",
    "messages",
    // Not "requests": "blocked due to unauthorized requests" is a key that was blocked.
    "request",
    "response",
    "responses",
    "内容",
    "內容",
    "コンテンツ",
    "内容が",
    "콘텐츠",
    "내용",
    "запрос",
    "текст",
    "сообщени",
    "контент",
    "содержим",
    "содержани",
    "ответ",
    // es, pt, fr, de, it, id, tr, vi, pl, uk, th, ar, hi and Korean.
    "입력",
    "요청",
    "contenido",
    "conteúdo",
    "contenu",
    "inhalt",
    "anfrage",
    "contenuto",
    "konten",
    "içerik",
    "nội dung",
    "вміст",
    "запит",
    "treść",
    // Questions, topics and answers in Chinese, Japanese and Korean.
    "提问",
    "话题",
    "話題",
    "回答",
    "入力内容",
    "応答",
    "이미지는",
    "질문",
    // An expression ("不適切な表現が含まれている").
    "表現",
    "表现",
    "표현",
    // Content and requests in el, cs, sk, hu, ro, sv, nl, fa, he, bn, ta, sw and more ar, hi, th,
    // ru, uk.
    "permintaan",
    "αίτημα",
    "περιεχόμεν",
    "obsah",
    "požadav",
    "tartalom",
    "tartalm",
    "sisältö",
    "kérés",
    "conținut",
    "cerere",
    "innehåll",
    "begäran",
    "inhoud",
    "verzoek",
    "محتوا",
    "درخواست",
    "محتوى",
    "الطلب",
    "תוכן",
    "בקשה",
    "বিষয়বস্তু",
    "অনুরোধ",
    "உள்ளடக்க",
    "கோரிக்கை",
    "maudhui",
    "ombi",
    "เนื้อหา",
    "คำขอ",
    "सामग्री",
    "अनुरोध",
    // An answer (hi): "सुरक्षा फ़िल्टर ने इस उत्तर को रोक दिया".
    "उत्तर",
    // A request in fr, es, pt, it, tr, vi, pl, zh and ja ("Votre requête a été bloquée par notre
    // système de modération", "您的請求可能違反使用政策").
    "requête",
    "solicitud",
    "petición",
    "solicitação",
    "requisição",
    "richiesta",
    "istek",
    "yêu cầu",
    "żądanie",
    "请求",
    "請求",
    "リクエスト",
    // Input (tr), output (ja).
    "girdi",
    "出力",
    // "This conversation was flagged as unsafe".
    "conversation",
    // "It goes against our Acceptable Use Policy": what was asked, said by what it goes against.
    "goes against",
    // Content in ms, ur, tl.
    "kandungan",
    "مواد",
    "nilalaman",
    "mensagem",
    "mensaje",
    "demande",
    // A message, content and an image in pl, de.
    "wiadomość",
    "treści",
    "bild",
    // A request, text, a prompt, content in mr, gu, kn, or, bn, ta, ur and Hinglish.
    "विनंती",
    "मजकूर",
    "સામગ્રી",
    "સંદેશ",
    "ಪ್ರಾಂಪ್ಟ್",
    "ଅନୁରୋଧ",
    "ବିଷୟବସ୍ତୁ",
    "বক্তব্য",
    "உள்ளடக்கம்",
    "bhasha",
];

/// Why it was refused.
const SAFETY: &[&str] = &[
    "safety",
    "prompt guard",
    "usage policy",
    "usage policies",
    "acceptable use",
    // Kong's `ai-prompt-guard` ("prompt matched a deny pattern"), a firewall for AI's
    // "prompt injection score 94 exceeds threshold".
    "deny pattern",
    "denied pattern",
    "prompt injection",
    // Usage policy in es/pt, de.
    "política de uso",
    "políticas de uso",
    "nutzungsrichtlinie",
    "nutzungsrichtlinien",
    "usage guidelines",
    "responsible ai",
    "high risk",
    // Bedrock guardrails' denied topics, a gateway's restricted topic list.
    "denied topic",
    "denied topics",
    "restricted topic",
    // "内容存在风险", "输入内容包含不当信息".
    "风险",
    "風險",
    "不当",
    "不當",
    // "您的请求包含不适当的内容" (inappropriate: 不 + 适当, which 不当 does not match).
    "不适当",
    "不適當",
    // Prompt injection in Japanese ("プロンプトインジェクションの疑いがあるため").
    "プロンプトインジェクション",
    // Terms and policies of use in Japanese, Korean and Russian ("利用規約に違反",
    // "서비스 정책에 위배", "нарушены правила использования").
    "利用規約",
    "서비스 정책",
    "이용 정책",
    "правила использования",
    "违法",
    "違法",
    "unsafe",
    "harmful",
    "moderation",
    "moderated",
    // Prompt-attack detectors (Lakera, Prompt Armor): "Prompt threat detected".
    "threat",
    "threats",
    "jailbreak",
    "prompt injection",
    "inappropriate",
    "prohibited",
    "flagged",
    "violate",
    "violates",
    "violated",
    "violating",
    "violation",
    "nsfw",
    // "banned prompt: ...", "contains banned words" (an account banned is `auth`).
    "banned prompt",
    "banned word",
    "banned words",
    "banned content",
    // Word filters: "The prompt contains words that are not allowed", "disallowed words".
    "words that are not allowed",
    "disallowed",
    "forbidden word",
    "forbidden words",
    "profanity",
    "obscene",
    "offensive",
    "blocklist",
    "blocklisted",
    "denylist",
    // What a filter names: personal data, copyright, "involving porn/politics" (not topics
    // such as violence, which a completion may speak of).
    "pii",
    "personally identifiable",
    // Personal information in Korean ("개인정보(주민등록번호)가 포함되어 있어").
    "개인정보",
    "copyrighted",
    // "may infringe third-party intellectual property".
    "intellectual property",
    "infringe",
    "infringes",
    "infringement",
    "涉黄",
    "涉政",
    "sensitive",
    "blocked",
    "filtering",
    "filtered",
    // Gemini's block reasons as SDKs print them ("blocked: prompt: BlockedReasonProhibitedContent").
    "blockedreasonprohibitedcontent",
    "blockedreasonsafety",
    "blockedreasonblocklist",
    "违规",
    "違規",
    "敏感",
    "不安全",
    "审核",
    "審核",
    // Review (zh-Hant), a safety filter (ja): "觸發了安全審查機制", "セーフティフィルタ".
    "审查",
    "審查",
    "セーフティ",
    // A safety filter (hi), prompts kept "safe for work".
    "सुरक्षा फ़िल्टर",
    "safe for work",
    // "input content audit failed" (iFlytek); "Failure to pass the risk control system".
    "audit",
    "risk control",
    // "内容由于合规问题已被阻止生成" (content blocked for compliance).
    "合规",
    "合規",
    "风控",
    "風控",
    "違反",
    "不適切",
    "有害",
    "유해",
    "부적절",
    "위반",
    "нарушает",
    "нарушени",
    // Polish: "Treść narusza zasady korzystania z usługi" (breaks the rules of use).
    "narusza",
    "naruszenie",
    "запрещ",
    "недопустим",
    "цензур",
    "модерац",
    "небезопасн",
    "неприемлем",
    // What image and video filters name: nudity, sexual content, minors, real people.
    "nudity",
    "nude",
    "sexual",
    "sexually",
    // "Request contains forbidden content, such as violence".
    "violence",
    "minors",
    "csam",
    "public figure",
    "public figures",
    "celebrity",
    "celebrities",
    "likeness",
    "toxic",
    "toxicity",
    "hate speech",
    "self-harm",
    "abuse detection",
    // A refusal in the model's words ("I'm sorry, but I can't assist with that request").
    "cannot assist",
    "违禁",
    "違禁",
    "不合规",
    "不合規",
    // The same in English as Chinese clouds translate it ("containing non-compliant content").
    "non-compliant",
    "noncompliant",
    "色情",
    "暴恐",
    "ブロック",
    "フィルター",
    "차단",
    "필터",
    "선정적",
    // es, pt, fr, de, it, id, tr, vi, pl, uk, th, ar, hi and Korean.
    "안전 정책",
    "안전 기준",
    "inhaltsfilter",
    "filtro de contenido",
    "filtro de conteúdo",
    "filtre de contenu",
    "filtro dei contenuti",
    "filter konten",
    "içerik filtresi",
    "bộ lọc nội dung",
    "фильтр контента",
    "seguridad",
    "segurança",
    "sécurité",
    "sicherheit",
    "sicurezza",
    "keamanan",
    "güvenlik",
    "an toàn",
    // Chinese, Japanese and Korean.
    "不被允许",
    "不允许的",
    "不允許",
    "利用ポリシー",
    "抵触",
    "安全性",
    "운영 정책",
    "위배",
    "검수",
    // Moderation in fr, es, pt, it, id, tr, vi, ru.
    "modération",
    "moderación",
    "moderação",
    "moderazione",
    "moderasi",
    "moderasyon",
    "kiểm duyệt",
    // Filters, moderation, safety and harm in el, cs, sk, hu, ro, sv, nl, fa, he, bn, ta, sw and
    // more ar, hi, th, ru, uk.
    "φίλτρο",
    "ασφαλεί",
    "επιβλαβ",
    "moderac",
    "filtr obsahu",
    "škodliv",
    "moderáció",
    "tartalomszűr",
    "káros",
    "moderare",
    "filtrul de conținut",
    "filtru de conținut",
    "dăunător",
    "moderering",
    "innehållsfilter",
    "skadlig",
    "moderatie",
    "inhoudsfilter",
    "schadelijk",
    "فیلتر",
    "ایمنی",
    "نامناسب",
    "تصفية",
    "مرشح",
    "السلامة",
    "ضار",
    "غير لائق",
    "ينتهك",
    "סינון",
    "מסנן",
    // A violation of the content policy (he, fa), words banned by moderation (id): "הפרת
    // מדיניות התוכן", "نقض سیاست‌های محتوایی", "kata yang dilarang oleh moderasi".
    "הפרת",
    "מדיניות התוכן",
    "نقض",
    "kata yang dilarang",
    "kata terlarang",
    "konten terlarang",
    "בטיחות",
    "מזיק",
    "מפר",
    "নিরাপত্তা",
    "ক্ষতিকর",
    "ফিল্টার",
    "பாதுகாப்பு",
    "தீங்கு",
    "வடிகட்டி",
    "usalama",
    "madhara",
    "ความปลอดภัย",
    "ไม่เหมาะสม",
    "ตัวกรอง",
    "सुरक्षा",
    "हानिकारक",
    "अनुचित",
    "фільтр",
    "шкідлив",
    // Breaks the rules, in Bulgarian.
    "нарушава",
    // Violates and blocked in vi, hi ("vi phạm chính sách an toàn và đã bị chặn").
    "vi phạm",
    "bị chặn",
    "उल्लंघन",
    // Blocked, in es/pt, it, pl, nl, fr, de, tr, id, th, ar, hi ("bloqueada por nuestro filtro de
    // seguridad", "تم حظر المحتوى").
    "bloqueada",
    "bloqueado",
    "bloccata",
    "bloccato",
    "zablokowana",
    "zablokowane",
    "zablokowany",
    "geblokkeerd",
    "bloquée",
    "bloqué",
    "blockiert",
    "engellendi",
    "diblokir",
    "ถูกบล็อก",
    "حظر",
    "अवरुद्ध",
    // Blocked or filtered in ro, hu, fi, sv ("Conținutul a fost blocat de filtrul de
    // siguranță", "Innehållet blockerades av säkerhetsfiltret").
    "blocat",
    "filtrul",
    "blokkolta",
    "szűrő",
    "estettiin",
    "suodat",
    "blockerades",
    "säkerhetsfilt",
    // Filters, blocks and moderation in cs, uz, hi, ja.
    "filtrem obsahu",
    "zablokován",
    "zablokována",
    "moderatsiya",
    "आपत्तिजनक",
    "ガードレール",
    // Violates, breaks, not allowed, sensitive or unfit in vi, id/ms, tr, ar, uk, fa, bn, ur, pt,
    // it, nl, ro, sw, tl, es, fr, cs, sv, el, hu, fi, zh ("Konten melanggar pedoman komunitas",
    // "Contenuto non consentito", "Innehållet bryter mot riktlinjerna", "输出内容触发安全策略").
    "nhạy cảm",
    "melanggar",
    "tidak dibenarkan",
    "ihlal",
    "يخالف",
    "порушує",
    "مغایر",
    "লঙ্ঘন",
    "خلاف ورزی",
    "não permitido",
    "non consentito",
    "niet toegestaan",
    "interzis",
    "hayaruhusiwi",
    "pinapayagan",
    "viola",
    "sensible",
    "inapproprié",
    "enfreint",
    "porušuje",
    "bryter mot",
    "ακατάλληλ",
    "sérti",
    "rikkoo",
    "安全策略",
    "安全政策",
    // "goes against our usage rules", "breaks our guidelines", "words we don't allow", "Our
    // filter stopped this answer", "our filters detected content".
    "usage rules",
    "our guidelines",
    "community guidelines",
    "content guidelines",
    "we do not allow",
    "filter stopped",
    "filters detected",
    // Blocked, inappropriate, against the rules of use, not allowed in es, pt, fr, de, it, nl,
    // pl ("Sua solicitação foi barrada", "considerado impróprio", "ne respecte pas nos
    // règles", "inhoud die we niet toestaan"). Not "niedozwolona wartość", a value refused.
    "bloqueado",
    "bloqueada",
    "barrado",
    "barrada",
    "bloqué",
    "bloquée",
    "blockiert",
    "bloccato",
    "bloccata",
    "geblokkeerd",
    "tegengehouden",
    "zablokowan",
    "impróprio",
    "imprópria",
    "inapropiado",
    "inapropiada",
    "inadequado",
    "inadequada",
    "inappropriato",
    "inappropriata",
    "unangemessen",
    "ongepast",
    "niestosown",
    "normas de uso",
    "ne respecte pas",
    "no respeta",
    "não respeita",
    "non rispetta",
    "niet toestaan",
    // Inappropriate, violation, safety guidelines, hateful, abusive in mr, gu, kn, or, bn, ta,
    // ur and Hinglish.
    "अनुचित",
    "ઉલ્લંઘન",
    "ಉಲ್ಲಂಘಿಸ",
    "ଅନୁଚିତ",
    "ঘৃণাত্মক",
    "மீறுவ",
    "خلاف",
    "abusive",
];

/// The provider has no room now.
const CAPACITY: &[&str] = &[
    "capacity",
    "overloaded",
    "overload",
    "high demand",
    "high traffic",
    "heavy traffic",
    "heavy load",
    "high load",
    "congested",
    "congestion",
    "busy",
    "saturated",
    "饱和",
    "飽和",
    "过载",
    "過載",
    "负载",
    "負載",
    "拥挤",
    "擁擠",
    "繁忙",
    "過負荷",
    "混雑",
    "混み合って",
    // "ただいまアクセスが集中しています": many callers at once.
    "アクセスが集中",
    // The provider's servers or compute ("服务器资源不足", "算力不足"), not the caller's
    // resource package (资源包), which is a prepaid quota.
    "服务器资源",
    "伺服器資源",
    "算力",
    "과부하",
    "혼잡",
    "перегруж",
    "перегруз",
    "высокая нагрузка",
    "высокой нагрузк",
    "сервер занят",
    // Capacity in es, pt, fr, de, it, tr, id.
    "capacité",
    "capacidad",
    "capacidade",
    "capacità",
    "kapazität",
    "kapasite",
    "kapasitas",
    // Its capacity, at capacity, heavy demand (tr).
    "kapasitesi",
    "kapasitede",
    "yoğun talep",
    // Processing capacity short (ko).
    "처리 용량",
    "용량이 부족",
    // Overloaded, busy or in high demand in es, pt, fr, de, it, uk, tr, vi, id, th, ar, fa, hi,
    // pl, nl, sv, fi, cs, sk, hu, ro, el, he, and more zh, ja, ko ("El servidor está
    // sobrecargado", "Der Server ist überlastet", "Máy chủ đang quá tải", "服务器忙",
    // "現在利用者が多く", "현재 사용자가 많아").
    "sobrecargado",
    "sobrecargada",
    "sobrecarregado",
    "sobrecarregada",
    "sobrecarga",
    "alta demanda",
    "servidor ocupado",
    "surchargé",
    "surchargée",
    "surcharge",
    "forte demande",
    "serveur occupé",
    "überlastet",
    "überlastung",
    "hohe auslastung",
    "ausgelastet",
    "sovraccarico",
    "sovraccarica",
    "elevata domanda",
    "server occupato",
    "перевантаж",
    "aşırı yük",
    "quá tải",
    "kelebihan beban",
    "sedang sibuk",
    "ทำงานหนักเกินไป",
    "เซิร์ฟเวอร์ไม่ว่าง",
    "مشغول",
    "محمل بشكل زائد",
    "شلوغ",
    "व्यस्त",
    "przeciążon",
    "overbelast",
    "överbelast",
    "ylikuormittunut",
    "ylikuormitettu",
    "ylikuormitus",
    "přetížen",
    "preťažen",
    "túlterhel",
    "supraîncărcat",
    "υπερφορτωμέν",
    "υπερφόρτωση",
    "עמוס",
    "服务器忙",
    "伺服器忙",
    "人数过多",
    "人數過多",
    "ビジー",
    "負荷が高",
    "利用者が多",
    "사용자가 많",
    "서버가 바쁩",
    // A rush (nl).
    "grote drukte",
];

/// Words of a short window: a limit per minute is waited out, whatever else the message says
/// ("Rate limit reached ... on tokens per min. ... check your plan and billing details").
const SHORT_WINDOW: &[&str] = &[
    // "at most 20 requests every minute", "60 calls a minute".
    "every minute",
    "every second",
    "calls a minute",
    "requests a minute",
    "messages a minute",
    // "Too many tokens in the last minute".
    "last minute",
    "per min",
    "per minute",
    "per-minute",
    "per_minute",
    "per second",
    "per-second",
    "per_second",
    "tpm",
    "rpm",
    "rps",
    "qps",
    "qpm",
    "try again in",
    "please retry in",
    "requests per",
    "tokens per min",
    // "Rate limit reached for free plan (10 requests/minute)".
    "requests/minute",
    "requests/min",
    "tokens/minute",
    "tokens/min",
    "req/min",
    // "Burst limit exceeded: 250 tokens/s sustained, 1000 burst".
    "tokens/s",
    "tokens/sec",
    "requests/s",
    "requests/sec",
    "req/s",
    "burst limit",
    // "リクエスト数が上限（60回/分）に達しました".
    "回/分",
    "次/分",
    "회/분",
    "每分钟",
    "每分鐘",
    // This minute's, at the minute level: "本分钟的调用额度已用完", "接口分钟级调用配额".
    "本分钟",
    "本分鐘",
    "分钟级",
    "分鐘級",
    "毎分",
    "분당",
    // "1分あたりの上限（60回）", "每秒", "초당".
    "分あたり",
    "秒あたり",
    "每秒",
    "毎秒",
    "초당",
    // "1分钟内最多请求100次" (at most 100 requests within 1 minute), "60秒内".
    "分钟内",
    "分鐘內",
    "秒内",
    "秒內",
    "分以内",
    "秒以内",
    // "秒間リクエスト数の上限" (requests per second), "1分間に60回".
    "秒間",
    "分間",
];

/// Short windows in Spanish, Portuguese, French, German, Italian, Indonesian, Turkish,
/// Vietnamese, Polish, Ukrainian, Thai, Arabic and Hindi: words of both [`SHORT_WINDOW`] and
/// [`RATE_WINDOW`] (see [`short_window`] and [`rate_window`]).
const SHORT_WINDOW_ELSEWHERE: &[&str] = &[
    "por minuto",
    "por segundo",
    "par minute",
    "par seconde",
    "pro minute",
    "pro sekunde",
    "al minuto",
    "al secondo",
    "per menit",
    "per detik",
    "dakikada",
    "saniyede",
    "mỗi phút",
    "mỗi giây",
    "в минуту",
    "в секунду",
    "за минуту",
    "на хвилину",
    "за хвилину",
    "na minutę",
    "na sekundę",
    "ต่อนาที",
    "ต่อวินาที",
    "في الدقيقة",
    "प्रति मिनट",
    // Per minute and per second in el, cs, sk, hu, ro, sv, nl, fa, he, bn, ta, sw and more ar,
    // hi, tr, ru, uk.
    "ανά λεπτό",
    "ανά δευτερόλεπτο",
    "za minutu",
    "za sekundu",
    "za minútu",
    "percenként",
    "másodpercenként",
    "pe minut",
    "pe secundă",
    "per minut",
    "per sekund",
    "per minuut",
    "per seconde",
    "در دقیقه",
    "در ثانیه",
    "في الثانية",
    "لكل دقيقة",
    "לדקה",
    "לשנייה",
    "প্রতি মিনিট",
    "প্রতি সেকেন্ড",
    "நிமிடத்திற்",
    "வினாடிக்",
    "kwa dakika",
    "kwa sekunde",
    "प्रति सेकंड",
    "dakika başına",
    "saniye başına",
    "на секунду",
    // Per minute in hr, sr, sl, bg, fi, no, da.
    "u minuti",
    "po minuti",
    "na minuto",
    "в минута",
    "за минута",
    "minuutissa",
    "per minutt",
    "i minuttet",
    "pr. minut",
    // Within a minute, per minute in ha, zu, uz, kk, az, mn, hy, ka, am, ne, si, km, lo, my, te.
    "cikin minti",
    "a minti",
    "ngomzuzu",
    "daqiqada",
    "минутына",
    "минутта",
    "dəqiqədə",
    "минутанд",
    "րոպեում",
    "წუთში",
    "በደቂቃ",
    "प्रति मिनेट",
    "විනාඩියකට",
    "ក្នុងមួយនាទី",
    "ຕໍ່ນາທີ",
    "တစ်မိနစ်",
    "నిమిషానికి",
];

/// Whether a message states a short window ([`SHORT_WINDOW`], in any language).
fn short_window(message: &str) -> bool {
    first(message, SHORT_WINDOW).is_some() || first(message, SHORT_WINDOW_ELSEWHERE).is_some()
}

/// Whether a message speaks of a rate window ([`RATE_WINDOW`], in any language).
fn rate_window(message: &str) -> bool {
    first(message, RATE_WINDOW).is_some() || first(message, SHORT_WINDOW_ELSEWHERE).is_some()
}

/// Most bytes between two words of one concept: they must belong to the same clause
/// ("credit balance is too low", "余额不足"), not to a pointer at the end of the message
/// ("... reached ... visit the billing page").
const NEAR: usize = 32;

/// Bytes of `message[from..to]` that long words (model ids such as
/// `meta/llama-3.3-70b-instruct`, paths, request ids) hold past [`LONG_WORD`] each: a model
/// named between two words of a concept is one word of the clause, however long its name.
fn long_words(message: &str, from: usize, to: usize) -> usize {
    message.as_bytes().get(from..to).map_or(0, |gap| {
        gap.split(|b| *b == b' ')
            .map(|w| w.len().saturating_sub(LONG_WORD))
            .sum()
    })
}

/// Whether the words from `from` to `at` are a subject and the verb before a state said of it,
/// in one clause: "the resource pack for kling-v2-1 video generation is depleted", "Your
/// quota for this month has been used up". The subject's words may run longer there than
/// between two words of a concept otherwise.
fn predicated(message: &str, from: usize, at: usize) -> bool {
    const VERBS: &[&str] = &["is ", "are ", "was ", "were ", "has been ", "have been "];
    message.get(from..at).is_some_and(|gap| {
        VERBS
            .iter()
            .any(|v| gap.strip_suffix(v).is_some_and(|g| g.ends_with(' ')))
            && !gap.contains([',', ';', ':', '('])
            // "the budget of 512 ... and truncation is disabled": another clause's subject.
            && ![" and ", " or ", " but ", " which ", " that ", " while "]
                .iter()
                .any(|w| gap.contains(w))
    })
}

/// Whether a sentence ends between two words ("Budget 0 is invalid. This model only works in
/// thinking mode": the model is not what is invalid).
fn sentence_ends(message: &str, from: usize, to: usize) -> bool {
    message
        .get(from..to)
        .is_some_and(|gap| gap.contains(". ") || gap.contains('。'))
}

/// How many bytes of a long word count towards [`NEAR`].
const LONG_WORD: usize = 12;

/// The words of a family that can occur in `message`: an ASCII message holds no CJK word, so
/// their scans are skipped.
fn candidates<'a>(message: &str, words: &'a [&'a str]) -> impl Iterator<Item = &'a str> + 'a {
    let ascii = message.is_ascii();
    // The first byte is enough to skip a word of another script; a word that starts in ASCII
    // and goes on in another ("por día") is ruled out by its pairs.
    words
        .iter()
        .copied()
        .filter(move |w| !ascii || w.as_bytes().first().is_some_and(u8::is_ascii))
}

fn first<'a>(message: &str, words: &'a [&'a str]) -> Option<&'a str> {
    super::pairs::with(message, |held| {
        candidates(message, words)
            .find(|w| held.may_hold(w) && word_offsets(message, w).next().is_some())
    })
}

/// `concept <name> "<a word>" + "<b word>"` when a word of `a` is near a word of `b`.
fn named_pair(message: &str, a: &[&str], b: &[&str], name: &str) -> Option<String> {
    let (x, y) = near(message, a, b)?;
    Some(format!("concept {name} \"{x}\" + \"{y}\""))
}

/// A word of `a` and a word of `b` within [`NEAR`] bytes of each other. Each word is looked for
/// once: the words of `a` first (usually none is there), then those of `b`.
fn near<'a>(message: &str, a: &'a [&'a str], b: &'a [&'a str]) -> Option<(&'a str, &'a str)> {
    super::pairs::with(message, |held| {
        let hits: Vec<(&str, usize)> = candidates(message, a)
            .filter(|w| held.may_hold(w))
            .flat_map(|w| word_offsets(message, w).map(move |i| (w, i)))
            .collect();
        if hits.is_empty() {
            return None;
        }
        candidates(message, b)
            .filter(|w| held.may_hold(w))
            .find_map(|wb| {
                word_offsets(message, wb).find_map(|j| {
                    hits.iter()
                        .find(|(wa, i)| {
                            let (from, to) = (*i.min(&j), *i.max(&j));
                            let span = to - from;
                            let most = NEAR + wa.len().max(wb.len());
                            let close = span <= most
                                || span <= 4 * NEAR && span - long_words(message, from, to) <= most
                                || (*i < j && span <= 2 * NEAR && predicated(message, from, j));
                            close && !sentence_ends(message, from, to)
                        })
                        .map(|(wa, _)| (*wa, wb))
                })
            })
    })
}

/// A call to pay: what a stop asks for when it does not say what ran out ("Add more at
/// claude.ai/settings/usage and keep going", "buy more credits", "请充值").
const PAY: &[&str] = &[
    // "Usage credits are required for long context requests".
    "are required",
    "is required",
    "add more",
    "buy more",
    "purchase more",
    "add credits",
    "buy credits",
    "purchase credits",
    "claim",
    // "Please purchase a plan to continue", "请先购买套餐", "add a payment method".
    "purchase a",
    "add a",
    "buy a",
    "购买",
    "購買",
    "top up",
    "top-up",
    "topped up",
    "tops up",
    "recharge",
    "充值",
    "購入",
    "チャージ",
    "충전",
    "구매",
    // "Пополните баланс" (top up the balance).
    "пополните",
    "пополнить",
];

/// What is paid for.
const PAID_FOR: &[&str] = &[
    "payment method",
    "plan",
    "subscription",
    "套餐",
    "credit",
    "credits",
    "usage",
    "funds",
    "balance",
    "wallet",
    "余额",
    "餘額",
    "额度",
    "額度",
    "クレジット",
    "크레딧",
    "잔액",
    "баланс",
];

/// Ended ("your subscription has expired", "您的企业套餐已失效").
const LAPSED: &[&str] = &[
    "expired",
    "lapsed",
    // "Your free trial has come to an end".
    "come to an end",
    "came to an end",
    "finished",
    "consumed",
    // "No active subscription found for this group", "You do not have an active subscription".
    "no active",
    "not have an active",
    "without an active",
    "inactive",
    // "Your trial has ended", "試用期已結束".
    "ended",
    "已结束",
    "已結束",
    "終了",
    "종료",
    "失效",
    "过期",
    "過期",
    "期限切れ",
    "만료",
    // Ended or expired in more languages (vi, id, ms, th, ar, fa, tr, ru, uk, pl, cs, ro, hu,
    // el, de, fr, es, pt, it, nl, sv, fi, hi, bn, ur, he, sw).
    "đã hết",
    "hết hạn",
    "berakhir",
    "tamat",
    "สิ้นสุด",
    "หมดอายุ",
    "انتهت",
    "به پایان",
    "sona erdi",
    "süresi doldu",
    "закончил",
    "истек",
    "истёк",
    "завершив",
    "закінчи",
    "dobiegł końca",
    "wygasł",
    "vypršel",
    "a expirat",
    "lejárt",
    "έληξε",
    "abgelaufen",
    "beendet",
    "terminé",
    "expiré",
    "finalizado",
    "finalizada",
    "terminado",
    "terminada",
    "expirado",
    "expirada",
    "terminou",
    "expirou",
    "terminata",
    "terminato",
    "scaduto",
    "scaduta",
    "verlopen",
    "beëindigd",
    "löpt ut",
    "päättynyt",
    "समाप्त",
    "শেষ",
    "ختم",
    "הסתיימה",
    "פג",
    "imeisha",
    "kimeisha",
    // Over or expired in id/ms, es, fa, el, sw, af, tl, yo ("Masa uji coba gratis sudah
    // selesai", "Se acabó tu periodo de prueba", "اشتراک شما منقضی شده است").
    "selesai",
    "se acabó",
    "منقضی",
    "λήξει",
    "umeisha",
    "verval",
    "nag-expire",
    "parí",
];

/// A billing word with a shortage word ("prepaid funds are depleted", "잔액이 부족합니다"), or a
/// call to pay for more ("Add more at claude.ai/settings/usage"); not a load balancer, not a
/// short window.
pub fn quota(message: &str) -> Option<String> {
    // "the thinking_budget value of 40000 is out of range": a value, not money run out.
    // "Request budget for this 10-second window is spent": a window of seconds, waited out.
    if short_window(message)
        || timed_window_in(message)
        || message.contains("load balanc")
        || ["out of range", "out of memory"]
            .iter()
            .any(|p| has_phrase(message, p))
    {
        return None;
    }
    // "同時実行数の上限（プラン: Free）に達しました": the caller's requests in flight, however
    // billed; "Regional capacity for this model is exhausted": the provider's.
    if first(message, CONCURRENT).is_some() || near(message, CAPACITY, SHORTAGE).is_some() {
        return None;
    }
    // "You have exceeded the rate limit for your subscription tier": a rate, however billed.
    if ["rate limit", "rate-limit", "ratelimit"]
        .iter()
        .any(|r| has_phrase(message, r))
    {
        return None;
    }
    // "Call failed because arrears of account": money owed is the shortage itself.
    if has_phrase(message, "arrears") {
        return Some("concept billing \"arrears\"".to_owned());
    }
    // "Invalid 'max_budget': must be a non-negative float": the end of a field's name, not
    // money (a code that starts with it, `PAYMENT_REQUIRED`, still names money).
    if let Some((billing, shortage)) = near(message, BILLING, SHORTAGE)
        .filter(|(b, _)| *b != "budget" || !time_budget(message))
        .filter(|(b, _)| !ends_identifiers(message, b))
    {
        // "현재 요금제에서는 이 모델을 사용할 수 없습니다": a model the plan does not include,
        // not a plan used up.
        let bare_no = matches!(shortage, "ありません" | "없습니다");
        if !(bare_no && near(message, MODEL, MISSING).is_some()) {
            return Some(format!("concept billing \"{billing}\" + \"{shortage}\""));
        }
    }
    if let Some((plan, lapsed)) = near(message, PLAN, LAPSED) {
        return Some(format!("concept plan \"{plan}\" + \"{lapsed}\""));
    }
    // "This feature requires an active subscription": another account's plan serves (a model
    // kept for a plan is `model_unavailable`, read where a model word is).
    // Not "Claude Opus is not available on your current plan": a model kept for a plan.
    let required = near(message, REQUIRES, PLAN)
        .filter(|(r, p)| *p != "terms" && !r.starts_with("not available"));
    if let Some((requires, plan)) = required {
        if first(message, MODEL).is_none() && model_id_in(message).is_none() {
            return Some(format!("concept \"{requires}\" + plan \"{plan}\""));
        }
    }
    named_pair(message, PAY, PAID_FOR, "pay")
        .or_else(|| named_pair(message, LICENCE, LICENCE_LAPSED, "licence"))
        .or_else(|| money_limit(message))
}

/// An amount of money beside a limit ("$10.02 used of $10.00 limit", "spent €49.99 of your
/// €50 cap"): a spend cap, whatever the envelope calls it.
fn money_limit(message: &str) -> Option<String> {
    const CURRENCY: &[&str] = &["$", "€", "£", "¥", "￥"];
    // "You owe $12.40 from last month": a bill left open.
    const LIMIT: &[&str] = &[
        "limit", "cap", "used", "spent", "exceeded", "reached", "owe",
    ];
    // "more than $10 spent by this key in 60 seconds. Requests resume in 45s": a spend rate.
    if timed_window_in(message)
        || [
            "resume in",
            "resumes in",
            "resume automatically",
            "try again in",
            "retry in",
            "retry after",
        ]
        .iter()
        .any(|w| has_phrase(message, w))
    {
        return None;
    }
    let bytes = message.as_bytes();
    let amount = CURRENCY.iter().find_map(|c| {
        super::occurrences(bytes, c.as_bytes())
            .find(|at| bytes.get(at + c.len()).is_some_and(u8::is_ascii_digit))
    })?;
    LIMIT.iter().find_map(|w| {
        word_offsets(message, w)
            .find(|at| at.abs_diff(amount) <= NEAR)
            .map(|_| format!("an amount of money beside \"{w}\""))
    })
}

/// Whether a message's budget is one of time ("exceeded 59.9s budget", "latency budget").
fn time_budget(message: &str) -> bool {
    word_offsets(message, "budget").any(|at| {
        let before = message.get(..at).unwrap_or_default().trim_end();
        let last = before.rsplit(' ').next().unwrap_or_default();
        ["time", "latency", "deadline"].contains(&last)
            || last
                .strip_suffix("ms")
                .or_else(|| last.strip_suffix('s'))
                .is_some_and(|n| {
                    !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                })
    })
}

/// Whether a message asks for a payment ("Add more at claude.ai/settings/usage", "请充值余额"):
/// a stop that no wait of minutes lifts, whatever lock a gateway states beside it.
pub fn pay_asked_in(messages: &[String]) -> bool {
    messages.iter().any(|m| near(m, PAY, PAID_FOR).is_some())
}

/// A paid licence: a seat or a product bought for a term.
const LICENCE: &[&str] = &["license", "licence", "licenses", "licences"];

/// Run out or past its term ("Your ContentBoost AI license expired on 2026-01-15", iFlytek's
/// "auth no enough license"). Not disabled: "disabled by the license administrator" is a
/// standing, and an invalid licence key a credential.
const LICENCE_LAPSED: &[&str] = &[
    "expired",
    "lapsed",
    "no enough",
    "not enough",
    "insufficient",
    "exhausted",
    "ran out",
    "run out",
    "used up",
];

/// A field the request must carry.
const FIELD_REQUIRED: &[&str] = &[
    "required property",
    "required field",
    "required parameter",
    "missing required",
    "is a required",
    "field required",
    // "model parameter not found in request, nor in gateway configuration".
    "parameter not found",
    "not found in request",
    // Bedrock: "The model returned the following errors: Malformed input request: #: required
    // key [anthropic_version] not found".
    "required key",
];

/// Whether a message speaks of a field the request lacks ("required property 'model' not
/// found"), not of a model.
pub fn field_required(message: &str) -> bool {
    first(message, FIELD_REQUIRED).is_some()
}

/// Unavailable for now.
const FOR_NOW: &[&str] = &[
    "temporarily unavailable",
    "temporarily not available",
    "暂时不可用",
    "暫時不可用",
    "一時的に利用できません",
    "일시적으로 사용할 수 없",
    // In nl, de, es, pt, fr, it, tr, vi, id, pl, ru ("Het model is tijdelijk niet beschikbaar").
    "tijdelijk niet beschikbaar",
    "vorübergehend nicht verfügbar",
    "temporalmente no disponible",
    "temporariamente indisponível",
    "temporairement indisponible",
    "temporaneamente non disponibile",
    "geçici olarak kullanılamıyor",
    "tạm thời không khả dụng",
    "sementara tidak tersedia",
    "chwilowo niedostępn",
    "временно недоступ",
    // Not available at the moment (es, pt).
    "momentáneamente no disponible",
    "no disponible temporalmente",
    "no disponible en este momento",
    "não disponível no momento",
    "indisponível no momento",
];

/// A model said to be unavailable, with no word that it is for now ("Upstream request failed:
/// Model is unavailable."): under a client error, the model the request names, not the
/// provider's load (which "temporarily unavailable" and a 5xx say).
pub fn model_unavailable_in(messages: &[String]) -> Option<String> {
    messages.iter().find_map(|m| {
        if !has_phrase(m, "unavailable") || first(m, FOR_NOW).is_some() {
            return None;
        }
        near(m, MODEL, &["unavailable"])
            .map(|(model, _)| format!("concept model \"{model}\" + \"unavailable\""))
    })
}

/// Requests of the caller's own in flight.
const CONCURRENT: &[&str] = &[
    "concurrent",
    "concurrency",
    "parallel requests",
    "同時実行",
    "同時リクエスト",
    "同時接続",
    "并发",
    "並發",
    "동시 요청",
    "동시 실행",
    "동시 접속",
    "parallel request",
    // "you already have 2 generations running; your plan allows 2 at a time".
    "at a time",
    // Requests at the same time in es, pt, fr, de, it, nl, tr, pl.
    "concurrencia",
    "concurrentes",
    "concorrentes",
    "simultáneas",
    "simultáneos",
    "simultâneas",
    "simultâneos",
    "simultanées",
    "simultanés",
    "gleichzeitige",
    "gleichzeitigen",
    "simultanee",
    "simultanei",
    "concorrenza",
    "gelijktijdige",
    "eşzamanlı",
    "równoczesn",
    "jednoczesn",
    // Batches in flight, which the caller's own finished batches free.
    "enqueued token",
    "tokens enqueued",
    "in-progress batch",
    "in_progress batch",
    // One reply at a time: "You have too many messages in progress", "Please wait for your
    // previous message to finish".
    "messages in progress",
    "requests in progress",
    "previous message to finish",
    "previous request to finish",
    "current reply to finish",
    // "Number of batch requests in the processing queue exceeds the limit ... Wait for some
    // in-progress batches to end": plural, and a queue of work in flight.
    "in-progress batches",
    "in_progress batches",
    "processing queue",
    // At the same time (ru, uk).
    "одновременн",
    "одночасн",
];

/// Asking again.
const RETRY: &[&str] = &[
    "try again",
    "retry",
    "try later",
    "come back",
    // "please use again tomorrow" (an app's own English).
    "use again",
    "重试",
    "重試",
    "再试",
    "再試",
    "再次尝试",
    "もう一度",
    "再度",
    "다시 시도",
    // A reset ("明日 0 時にリセットされます", "resets tomorrow").
    "reset",
    "resets",
    "リセット",
    "重置",
    "초기화",
    // Try again, and a reset, in the same languages.
    "inténtalo",
    "intente",
    "intenta",
    "vuelva a intentar",
    "tente novamente",
    "tente de novo",
    "réessayez",
    "réessayer",
    "erneut",
    "riprova",
    "riprovare",
    "coba lagi",
    "tekrar",
    "thử lại",
    "повторите",
    "попробуйте",
    "спробуйте",
    "повторіть",
    "spróbuj",
    "zkuste",
    "skúste",
    "próbálja",
    "próbáld",
    "încercați",
    "încearcă",
    "försök igen",
    "probeer het",
    "opnieuw",
    "δοκιμάστε",
    "حاول",
    "أعد المحاولة",
    "دوباره تلاش",
    "נסה שוב",
    "נסו שוב",
    "আবার চেষ্টা",
    "மீண்டும் முயற்சி",
    "jaribu tena",
    "ลองใหม่",
    "पुनः प्रयास",
    "फिर से प्रयास",
    "se restablece",
    "será redefinido",
    "se réinitialise",
    "zurückgesetzt",
    "обновится",
    "оновиться",
    "sıfırlan",
    "obnoví",
    "visszaáll",
    "resetează",
    "återställs",
    "ανανεωθεί",
    "ανανεώνεται",
    // Again, in Persian.
    "دوباره",
    // Try again, and renewed, in pa, ka, ha, si, km, my, am, ne, mn, lo, yo, zu, uz, kk, az, hy,
    // te.
    "ਦੁਬਾਰਾ ਕੋਸ਼ਿਸ਼",
    "სცადეთ",
    "განახლდება",
    "sake gwadawa",
    "sake buɗe",
    "නැවත උත්සාහ",
    "නැවත සකස",
    "ព្យាយាមម្តងទៀត",
    "ထပ်မံကြိုးစား",
    "እንደገና ይሞክሩ",
    "फेरि प्रयास",
    "дахин оролд",
    "ລອງໃໝ່",
    "gbìyànjú",
    "zama futhi",
    "qayta urin",
    "қайталап көр",
    "yenidən cəhd",
    "կրկին փորձ",
    "మళ్లీ ప్రయత్నించ",
    // Come back (es, pt, fr).
    "vuelve",
    "vuelva",
    "volte",
    "revenez",
    "reviens",
    // Try again in mr, gu, kn, ml, or, ur and Hinglish.
    "पुन्हा प्रयत्न",
    "ફરી પ્રયાસ",
    "ಮತ್ತೆ ಪ್ರಯತ್ನ",
    "വീണ്ടും ശ്രമി",
    "ପୁଣି ଚେଷ୍ଟା",
    "دوبارہ کوشش",
    "dobara try",
    "phir se try",
];

/// A day or more away.
const DAYS_LATER: &[&str] = &[
    "tomorrow",
    "next week",
    "next month",
    "明天",
    "明日",
    "翌日",
    "下周",
    "下週",
    "下个月",
    "下個月",
    "来週",
    "来月",
    "내일",
    "다음 주",
    "다음 달",
    // Tomorrow in es, pt, fr, de, nl, it, id, tr, vi, ru, uk, pl, el, cs, sk, hu, ro, sv, fa, he,
    // bn, ta, sw, ar, th.
    "mañana",
    "amanhã",
    "demain",
    "morgen",
    "domani",
    "besok",
    "yarın",
    "ngày mai",
    "завтра",
    "jutro",
    "zítra",
    "zajtra",
    "holnap",
    "mâine",
    "imorgon",
    "i morgon",
    "αύριο",
    "غدا",
    "غدًا",
    "فردا",
    "מחר",
    "আগামীকাল",
    "நாளை",
    "kesho",
    "พรุ่งนี้",
    // Tomorrow in ka, ha, si, km, my, ne, mn, lo, zu, uz, kk, az, hy, te.
    "ხვალ",
    "gobe",
    "හෙට",
    "ថ្ងៃស្អែក",
    "မနက်ဖြန်",
    "भोलि",
    "маргааш",
    "ມື້ອື່ນ",
    "kusasa",
    "ertaga",
    "ертең",
    "sabah",
    "վաղը",
    "రేపు",
    // Tomorrow in mr, gu, kn, ml, or.
    "उद्या",
    "આવતીકાલે",
    "ನಾಳೆ",
    "നാളെ",
    "ଆସନ୍ତାକାଲି",
    // Tomorrow in yo, rw.
    "ọ̀la",
    "ejo",
];

/// A retry a day or more away ("请下周重试", "try again tomorrow"): no wait helps the request.
pub fn retry_days_later(message: &str) -> Option<String> {
    let (later, retry) = near(message, DAYS_LATER, RETRY)?;
    Some(format!("concept retry \"{retry}\" + \"{later}\""))
}

/// Words before the day a limit comes back ("resets nov 1", "renews on december 1st").
const RESETS_ON: &[&str] = &[
    "resets",
    "reset on",
    "renews",
    "refreshes",
    "refills",
    // "Next allowance opens on 1 May", "requests will resume on the 1st".
    "opens on",
    "resume on",
];

const MONTHS: &[&str] = &[
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// A limit that comes back on a named day of the calendar ("You're out of extra usage · resets
/// Nov 1", "Quota resets on 2025-12-01."): days away, not minutes. Not with a clock time beside
/// the day ("resets Dec 6, 10:05"), which may be minutes away.
pub fn reset_date_in(message: &str) -> Option<String> {
    RESETS_ON.iter().find_map(|word| {
        word_offsets(message, word).find_map(|at| {
            let rest = message.get(at + word.len()..)?.trim_start();
            let rest = rest.strip_prefix("on ").unwrap_or(rest);
            if let Some(date) = iso_day(rest).or_else(|| slash_day(rest)) {
                return Some(format!("{date} reset"));
            }
            // The day first ("opens on 1 June", "resets on 15th March").
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if (1..=2).contains(&digits) {
                let after = rest.get(digits..)?;
                let after = ["st ", "nd ", "rd ", "th ", " "]
                    .iter()
                    .find_map(|s| after.strip_prefix(s))?;
                let month = MONTHS.iter().find(|m| after.starts_with(*m))?;
                return Some(format!("{} {month} reset", rest.get(..digits)?));
            }
            let month = MONTHS.iter().find(|m| rest.starts_with(*m))?;
            let name_end = rest.find(' ')?;
            let day = rest.get(name_end + 1..)?;
            let digits = day.bytes().take_while(u8::is_ascii_digit).count();
            let clock = day
                .get(..day.len().min(16))
                .is_some_and(|d| d.contains(':'));
            let named = rest
                .get(..name_end)?
                .bytes()
                .all(|b| b.is_ascii_alphabetic() || b == b'.');
            ((1..=2).contains(&digits) && named && !clock)
                .then(|| format!("{month} {} reset", day.get(..digits).unwrap_or_default()))
        })
    })
}

/// A calendar day written `YYYY-MM-DD` at the start of `text` with no clock time after it
/// ("2025-12-01.", not "2025-12-01T00:00:00Z" nor "2025-12-01 10:05").
fn iso_day(text: &str) -> Option<&str> {
    let date = text.get(..10)?;
    let shaped = date.bytes().enumerate().all(|(i, b)| match i {
        4 | 7 => b == b'-',
        _ => b.is_ascii_digit(),
    });
    let after = text.get(10..).unwrap_or_default();
    let clock = after.starts_with(['T', 't'])
        || after
            .trim_start_matches([' ', ','])
            .get(..3)
            .is_some_and(|t| t.as_bytes().get(2) == Some(&b':'));
    (shaped && !clock).then_some(date)
}

/// A calendar day written with slashes and a four-digit year at the start of `text`
/// ("06/28/2026", "2/3/2026"), with no clock time after it.
fn slash_day(text: &str) -> Option<&str> {
    let mut end = 0;
    for (i, max) in [2, 2, 4].into_iter().enumerate() {
        let part = text.get(end..)?;
        let digits = part.bytes().take_while(u8::is_ascii_digit).count();
        let fits = if i == 2 {
            digits == 4
        } else {
            (1..=max).contains(&digits)
        };
        if !fits {
            return None;
        }
        end += digits;
        if i < 2 {
            text.get(end..)?.strip_prefix('/')?;
            end += 1;
        }
    }
    let after = text.get(end..).unwrap_or_default();
    let clock = after
        .trim_start_matches([' ', ','])
        .get(..3)
        .is_some_and(|t| t.as_bytes().get(2) == Some(&b':') || t.as_bytes().get(1) == Some(&b':'));
    (!clock).then(|| text.get(..end)).flatten()
}

/// A model's age: retired, or about to be.
const RETIRED: &[&str] = &[
    "as legacy",
    "deprecated",
    "decommissioned",
    "retired",
    "end of life",
    "end-of-life",
];

/// A model word with a missing word ("the model gpt-5 does not exist or you do not have access",
/// "モデルが見つかりません").
pub fn model_missing(message: &str) -> Option<String> {
    if parameter_refused(message).is_some() {
        return None;
    }
    // "Access denied. This Model is marked by provider as Legacy" (Bedrock): the model's age
    // is why, not the caller's rights.
    if let Some((model, age)) = near(message, MODEL, RETIRED) {
        return Some(format!("concept model \"{model}\" + \"{age}\""));
    }
    if first(message, PERMISSION).is_some() {
        return None;
    }
    // "模型服务暂时不可用，请稍后重试": unavailable for now is the provider's load, not a
    // model that is gone. "$: required property 'model' not found": a field the request
    // lacks, not a model.
    if first(message, FOR_NOW).is_some() || first(message, FIELD_REQUIRED).is_some() {
        return None;
    }
    if let Some((model, missing)) = near(message, MODEL, MISSING) {
        // "error loading model: unable to allocate CUDA0 buffer": the machine's memory, not
        // the model, failed.
        if !["allocate", "out of memory"]
            .iter()
            .any(|w| has_phrase(message, w))
        {
            return Some(format!("concept model \"{model}\" + \"{missing}\""));
        }
    }
    model_lacks_capability(message)
        .or_else(|| model_field_choices(message))
        .or_else(|| model_needs_plan(message))
        .or_else(|| model_terms_unaccepted(message))
        .or_else(|| model_id_gone(message))
}

/// A validator's check of the `model` field against the models served ("model: Input should
/// be 'bulbul:v2', 'bulbul:v3' or 'bulbul:v4-flash'", "body.model : Value error, Input
/// 'sarvam-nope' should be one of sarvam-105b, ..."): the model asked for is not one of them;
/// another serves. Not a check of its type ("model: Input should be a valid string").
fn model_field_choices(message: &str) -> Option<String> {
    const CHOICES: &[&str] = &[
        "should be one of",
        "must be one of",
        "should be '",
        "should be \"",
    ];
    word_offsets(message, "model").find_map(|at| {
        let rest = message.get(at + "model".len()..)?.trim_start_matches(' ');
        let line = rest.strip_prefix(':')?.split('\n').next()?;
        let choice = CHOICES.iter().find(|c| line.contains(*c))?;
        Some(format!(
            "concept model field + \"{}\"",
            choice.trim_end_matches(['\'', '"'])
        ))
    })
}

/// A model named only by its id, gone ("Jurassic-2 Ultra was retired", "command-nightly has
/// been discontinued", "llama3.1:70b is not downloaded on this machine"). Not "deprecated": a
/// parameter is deprecated for a model more often than a model is.
fn model_id_gone(message: &str) -> Option<String> {
    const GONE_BY_ID: &[&str] = &[
        "retired",
        "discontinued",
        "decommissioned",
        "turned off",
        "switched off",
        "shut down",
        "taken down",
        "been removed",
        "stopped serving",
        "stopped offering",
        "not downloaded",
        "not on this server",
        "end of life",
        "unpublished",
        "no longer be invoked",
    ];
    let gone = first(message, GONE_BY_ID)?;
    let id = model_id_in(message)?;
    Some(format!("concept model \"{id}\" + \"{gone}\""))
}

/// A model's own terms or licence.
const TERMS: &[&str] = &["terms", "license", "licence", "eula", "agreement"];

/// Agreed to, or not.
const ACCEPTED: &[&str] = &["accept", "accepted", "agree", "agreed", "sign", "signed"];

/// A model whose terms the caller has not accepted ("User has not agreed to Llama3.2 model
/// terms", "you must accept the Llama 4 Community License for this model"): gated until someone
/// accepts them in a console; another model serves now.
fn model_terms_unaccepted(message: &str) -> Option<String> {
    let (accept, terms) = near(message, ACCEPTED, TERMS)?;
    let model = first(message, MODEL).or_else(|| model_id_in(message))?;
    Some(format!(
        "concept model \"{model}\" + \"{accept}\" + \"{terms}\""
    ))
}

/// What serves a model on a platform and can be stopped: an endpoint, a deployment, an
/// inference component, a service or app hosting one.
const SERVING: &[&str] = &[
    "endpoint",
    "deployment",
    "inference component",
    "provisioned model",
    "service",
    "app",
    "application",
];

/// Not running until someone starts it: paused, stopped, out of service, scaled to nothing,
/// failed. Waiting does not help; another model does.
const STOPPED: &[&str] = &[
    "is paused",
    "been paused",
    "is stopped",
    "been stopped",
    "not in service",
    "scaled down to 0",
    "scaled down to zero",
    "scaled to 0",
    "no running copies",
    "no running instances",
    "is in error",
    "in a failed state",
    // "Deployment x of model y is inactive. Activate the deployment before calling it."
    "is inactive",
    "已停止",
    "已暂停",
    "已暫停",
    "停止中",
    "一時停止",
];

/// A serving endpoint that is not running, or not there ("The endpoint is paused, ask a
/// maintainer to restart it", "Inference component x has no running copies (scaled down to 0)",
/// "The provisioned model ... is not in service. Current status: Creating", "Endpoint with name
/// 'x' does not exist"). Not when a limit reached stopped it ("has reached the set inference
/// limit ..., and the model service has been paused"): the limit is what the caller must lift.
pub fn serving_stopped(message: &str) -> Option<String> {
    // An allowance used up, or money ("Service suspended: billing account is inactive"): the
    // account's stop, whatever stopped with it.
    if first(message, ALLOWANCE).is_some() && first(message, USED_UP).is_some()
        || first(message, BILLING).is_some()
    {
        return None;
    }
    named_pair(message, SERVING, STOPPED, "stopped")
        .or_else(|| named_pair(message, NAMED_ENDPOINT, GONE_ENDPOINT, "endpoint"))
}

/// A serving endpoint named as such, not a URL path ("Endpoint with name 'fraud-llm' does not
/// exist", Databricks; "Inference endpoint x not found").
const NAMED_ENDPOINT: &[&str] = &[
    "endpoint with name",
    "endpoint named",
    "serving endpoint",
    "inference endpoint",
];

/// Not there.
const GONE_ENDPOINT: &[&str] = &["does not exist", "not found"];

/// Sampling parameters: a request field, not the model ("Penalty is not enabled for
/// models/gemini-2.5-flash", "`temperature` is deprecated for this model").
const SAMPLING: &[&str] = &[
    "temperature",
    "top_p",
    "top_k",
    "top-p",
    "top-k",
    "penalty",
    "logprobs",
    "logit_bias",
    "seed",
];

/// A sampling parameter the model refuses: the same model serves the request without it, so it
/// is a bad request whatever model word and missing word stand beside it.
pub fn parameter_refused(message: &str) -> Option<String> {
    let (parameter, missing) = near(message, SAMPLING, MISSING)?;
    // "doubao-seed-1.6": a word of a model's name, not the request's `seed`.
    let in_a_name = |at: usize| {
        let bytes = message.as_bytes();
        at.checked_sub(1).and_then(|i| bytes.get(i)) == Some(&b'-')
            || bytes.get(at + parameter.len()) == Some(&b'-')
    };
    if word_offsets(message, parameter).all(in_a_name) {
        return None;
    }
    Some(format!("concept parameter \"{parameter}\" + \"{missing}\""))
}

/// Not done by it.
const NOT_DONE: &[&str] = &[
    // "Model bge-m3 is not able to chat" (an embedding model asked to chat).
    "not able to",
    "not supported",
    "does not support",
    "unsupported",
    "不支持",
    "不支援",
    "サポートされていません",
    "지원되지 않",
    // es, pt, fr, de, it, id, tr, vi, pl, uk, th, ar, hi.
    "no soporta",
    "no admite",
    "não suporta",
    "não oferece suporte",
    "ne prend pas en charge",
    "ne supporte pas",
    "unterstützt kein",
    "unterstützt nicht",
    "non supporta",
    "tidak mendukung",
    "nie obsługuje",
    "desteklemiyor",
    "không hỗ trợ",
    "не поддерживает",
    "не підтримує",
    // Japanese and Korean.
    "対応していません",
    "対応しておりません",
    "非対応",
    "지원하지 않습니다",
    // Does not support, in ja, nl, uz, hi, th, ar, fa, he, cs/sk, hu, sv, tr.
    "サポートしていません",
    "ondersteunt geen",
    "ondersteunt niet",
    "qo'llab-quvvatlamaydi",
    "समर्थन नहीं",
    "ไม่รองรับ",
    "لا يدعم",
    "پشتیبانی نمی",
    "אינו תומך",
    "לא תומך",
    "nepodporuje",
    "nem támogatja",
    "stöder inte",
    "desteklenmiyor",
];

/// What a model can or cannot do, as opposed to a parameter's value ("'max_tokens' is not
/// supported with this model" is a bad request: the same model serves it without the field).
const CAPABILITY: &[&str] = &[
    "tools",
    // OpenAI's Responses API: "Hosted tool 'file_search' is not supported with gpt-4."
    "hosted tool",
    "tool calling",
    "tool use",
    "function calling",
    // "This model doesn't support system messages", "... does not support structured outputs".
    "system messages",
    "system message",
    "structured outputs",
    "structured output",
    "chat completions",
    "chat completion",
    // "\"nomic-embed-text\" does not support chat".
    "chat",
    "messages api",
    // "the requested model x does not support this api": the API the request called.
    "this api",
    "this endpoint",
    "this operation",
    "vision",
    "image input",
    "image inputs",
    "images",
    "video",
    "videos",
    "pdf",
    "audio",
    "embeddings",
    // Bedrock Converse: "This model doesn't support the toolConfig field".
    "toolconfig",
    // Ollama: "\"gemma3:1b\" does not support insert" (fill-in-the-middle's `suffix`).
    "insert",
    "工具",
    "函数调用",
    // es, pt, fr, de, it, id, tr, vi, pl, uk, th, ar, hi.
    "herramientas",
    "ferramentas",
    "outils",
    "werkzeuge",
    "strumenti",
    "narzędzi",
    "araç",
    "công cụ",
    "инструмент",
    "visión",
    "visão",
    "imágenes",
    "imagens",
    "bilder",
    "immagini",
    "gambar",
    "obrazów",
    "görsel",
    "hình ảnh",
    "изображен",
    // Chinese, Japanese and Korean.
    "画像",
    "画像入力",
    "图像",
    "ツール",
    "関数呼び出し",
    "도구",
    "함수 호출",
    "视觉",
    "視覚",
    "비전",
    // Features only some models have (Gemini's grounding and image output, JSON mode).
    "multimodal",
    "multimodal input",
    "image generation",
    "image output",
    "grounding",
    "search grounding",
    "code execution",
    "json mode",
    "structured output",
    "structured outputs",
    "system instruction",
    "system instructions",
    // Images, tools, thinking, JSON mode and system prompts in more languages.
    "imagem",
    "entrada de imagem",
    "immagine",
    "зображен",
    "รูปภาพ",
    "الصور",
    "صورة",
    "تصویر",
    "תמונה",
    "छवि",
    "rasmlar",
    "ابزار",
    "أدوات",
    "כלים",
    "เครื่องมือ",
    "टूल",
    "拡張思考",
    "思考モード",
    "思考模式",
    "深度思考",
    "modalità json",
    "modo json",
    "mode json",
    "json-modus",
    "system prompt",
    "systeeminstructies",
];

/// Ways of answering a model has or lacks, counted only as the last words of what is not
/// supported ("'claude-3-haiku' does not support thinking."); "does not support thinking level
/// minimal" or "reasoning effort" is a value of the request.
const MODE: &[&str] = &["thinking", "reasoning", "extended thinking"];

fn mode_lacking(message: &str) -> Option<&'static str> {
    // "doesn't support" is read written out ([`super::evidence::normalize`]).
    const NOT_DONE: &str = "does not support";
    word_offsets(message, NOT_DONE).find_map(|at| {
        let rest = message.get(at + NOT_DONE.len()..)?.trim_start();
        MODE.iter().copied().find(|mode| {
            rest.strip_prefix(mode).is_some_and(|after| {
                after
                    .chars()
                    .next()
                    .is_none_or(|c| matches!(c, '.' | ',' | ';' | '!' | '"' | '\'' | '`' | ')'))
            })
        })
    })
}

/// A model that cannot do what the request needs ("tool calling is not supported with this
/// model", "The model x does not support chat completions"): another model can.
fn model_lacks_capability(message: &str) -> Option<String> {
    if let Some(mode) = mode_lacking(message) {
        return Some(format!("concept model lacks \"{mode}\""));
    }
    if let Some((model, not_done)) = near(message, MODEL, NOT_DONE) {
        let capability = first(message, CAPABILITY)?;
        return Some(format!(
            "concept model \"{model}\" + \"{not_done}\" + \"{capability}\""
        ));
    }
    // Ollama names the model without the word: "registry.ollama.ai/library/gemma3:1b does not
    // support tools". Not an endpoint or API that does not.
    // Nor a format ("audio input format not supported: must be wav or mp3"): the same model
    // serves the request in another format.
    // Nor a file that would not decode ("failed to process audio: corrupt or unsupported data").
    if [
        "endpoint",
        "api",
        "parameter",
        "parameters",
        "format",
        "formato",
        "formaat",
        "formatu",
        "corrupt",
        "corrupted",
    ]
    .iter()
    .any(|w| has_phrase(message, w))
    {
        return None;
    }
    let (not_done, capability) = near(message, NOT_DONE, CAPABILITY)?;
    // Nor two capabilities asked together ("Tool use with function calling is unsupported":
    // Gemini's search tool beside declared functions): the request's mix, which it can drop.
    if capabilities_combined(message) {
        return None;
    }
    // Nor a parameter whose name holds the word ("chat_template is not supported for Mistral
    // tokenizers", "tool_choice is not supported"): the request's option, not the model's
    // capability.
    if only_in_identifiers(message, capability) {
        return None;
    }
    Some(format!("concept \"{not_done}\" + \"{capability}\""))
}

/// Whether a capability is named "with" or "together with" another ("tool use with function
/// calling").
fn capabilities_combined(message: &str) -> bool {
    CAPABILITY.iter().any(|a| {
        word_offsets(message, a).any(|i| {
            let rest = message.get(i + a.len()..).unwrap_or_default();
            let rest = rest
                .strip_prefix(" together with ")
                .or_else(|| rest.strip_prefix(" with "));
            rest.is_some_and(|r| {
                let r = r.strip_prefix("the ").unwrap_or(r);
                CAPABILITY.iter().any(|b| b != a && r.starts_with(b))
            })
        })
    })
}

/// Whether every occurrence of `word` in `message` is glued to a snake_case name by `_`.
fn only_in_identifiers(message: &str, word: &str) -> bool {
    let bytes = message.as_bytes();
    let glued =
        |at: usize| underscore_before(bytes, at) || bytes.get(at + word.len()) == Some(&b'_');
    super::occurrences(bytes, word.as_bytes()).all(glued)
}

/// Whether the byte before `at` is `_` (a word glued to the name before it).
fn underscore_before(bytes: &[u8], at: usize) -> bool {
    at.checked_sub(1).and_then(|i| bytes.get(i)) == Some(&b'_')
}

/// Whether `word` occurs in `message` only as the end of an identifier (`max_budget`).
fn ends_identifiers(message: &str, word: &str) -> bool {
    let bytes = message.as_bytes();
    super::occurrences(bytes, word.as_bytes()).all(|at| underscore_before(bytes, at))
}

/// Needing something first.
const REQUIRES: &[&str] = &[
    "requires",
    "does not include",
    "not include",
    // "The model gpt-5 is not included in your Starter plan".
    "not included",
    "only available",
    "available only",
    // "gemini-2.5-pro is not available on the free tier".
    "not available on",
    "restricted to",
    "exclusive to",
    "仅对",
    "僅對",
    "のみ",
    "전용",
    // "Opus is not available with the Claude Pro plan", "... for your current tier".
    "not available with",
    "not available for",
    // "该模型需要 VIP3 及以上等级", "Model x wymaga poziomu Tier 2" (pl), "erfordert" (de),
    // "n'est pas inclus dans votre offre" (fr), "no está incluido en tu plan" (es), "não está
    // incluído" (pt), "プロフェッショナルプラン以上でご利用いただけます" (a plan "or above").
    "需要",
    "以上で",
    // "ご利用中のプランでは使用できません（Pro プラン以上が必要です）".
    "以上が必要",
    "では使用できません",
    "이상",
    "wymaga",
    "erfordert",
    "pas inclus",
    "requiere",
    "requer",
    "no está incluido",
    "não está incluído",
];

/// What it is only for.
const PLAN: &[&str] = &[
    // "The model x requires terms acceptance": an admin's step, not this request's.
    "terms",
    "subscription",
    "plan",
    "tier",
    "paid",
    "enterprise",
    "premium",
    "trial",
    // "Fast mode requires usage credits".
    "usage credits",
    "试用",
    "試用",
    "トライアル",
    "체험",
    "会员",
    "會員",
    "套餐",
    "プラン",
    "요금제",
    // Tiers and offers in other words: "VIP3 及以上等级", "votre offre actuelle", "poziomu
    // rozliczeniowego", "Abonnement", "suscripción", "assinatura".
    "vip",
    "等级",
    "等級",
    "offre",
    "abonnement",
    "forfait",
    "poziom",
    "suscripción",
    "assinatura",
    // "package expired" (a relay's resource package).
    "package",
    // Subscription in European Portuguese ("A sua subscrição expirou").
    "subscrição",
    // A free trial in more languages ("Thời gian dùng thử đã hết", "Ваш пробный период
    // закончился", "Votre essai gratuit est terminé", "תקופת הניסיון שלך הסתיימה").
    "dùng thử",
    "uji coba",
    "percubaan",
    "ทดลองใช้",
    "التجريبية",
    "آزمایشی",
    "deneme",
    "пробный",
    "пробний",
    "próbny",
    "zkušební",
    "probă",
    "próbaidő",
    "δοκιμή",
    "δοκιμαστική",
    "testzeitraum",
    "testphase",
    "testversion",
    "essai gratuit",
    "période d'essai",
    "prueba gratuita",
    "período de prueba",
    "teste gratuito",
    "período de teste",
    "prova gratuita",
    "periodo di prova",
    "proefperiode",
    "provperiod",
    "kokeilujakso",
    "kokeilujaksosi",
    "परीक्षण",
    // A subscription (ro, el, hu, he) lapses like a plan: "Abonamentul a expirat".
    "abonament",
    "abonamentul",
    "συνδρομ",
    "előfizetés",
    "מנוי",
    "ট্রায়াল",
    "آزمائش",
    "ניסיון",
    "majaribio",
    // A trial or subscription in es, pt, ar, fa, ru, uk, bn, ur, sw, af, yo.
    "periodo de prueba",
    "período experimental",
    "periodo experimental",
    "اشتراك",
    "اشتراک",
    "подписк",
    "підписк",
    "সাবস্ক্রিপশন",
    "پلان",
    "usajili",
    "intekening",
    "ìforúkọsílẹ̀",
];

/// Where a caller is.
const GEO: &[&str] = &[
    "country",
    "region",
    "territory",
    "location",
    "国家",
    "地区",
    "地區",
    "国・地域",
    "지역",
    // Your region or country in ar, fa, th, sw, es, pt, fr, it, tr, vi, id.
    "منطقتك",
    "منطقه",
    "ภูมิภาค",
    "eneo",
    "país",
    "pays",
    "région",
    "região",
    "regione",
    "bölge",
    "khu vực",
    "wilayah",
    // Malay's region, a geographic area in fa.
    "rantau",
    "جغرافیایی",
    // Region in my.
    "ဒေသ",
];

/// Not served there.
const NOT_SERVED: &[&str] = &[
    "not supported",
    "unsupported",
    "not available",
    "not yet available",
    "unavailable",
    "不支持",
    "不支援",
    "不可用",
    "サポートされていません",
    "지원되지 않",
    // Not provided (ko): "현재 접속하신 지역에서는 제공되지 않습니다".
    "제공되지 않",
    // Not offered or usable there ("This model can't be used from your country"), and not
    // available or supported in ar, fa, th, sw, es, pt, fr, it, tr, vi, id, ru.
    "cannot be used",
    "not offered",
    "غير متاح",
    "پشتیبانی نمی",
    "ไม่รองรับ",
    "haipatikani",
    "no disponible",
    "non disponible",
    "não disponível",
    "non disponibile",
    "desteklenmiyor",
    "không khả dụng",
    "tidak tersedia",
    "недоступ",
    // Cannot be used in my.
    "အသုံးမပြုနိုင်",
];

/// What a caller is allowed.
const ALLOWANCE: &[&str] = &[
    // "Predictions limit exceeded": any limit, once the rate words and short windows are out.
    "limit",
    "limits",
    "usage limit",
    "usage limits",
    "allowance",
    "allocation",
    "quota",
    "included",
    "limit for your",
    "your limit",
    "cap",
    // "daily request count exceeded (11201)": a count of calls granted.
    "request count",
    "requests count",
    "call count",
    "calls count",
    "用量",
    "使用量",
    "配额",
    "配額",
    "次数",
    "次數",
    "业务量",
    "調用量",
    "调用量",
    "上限",
    // "無料枠を使い切りました" (the free allowance is used up), "利用枠".
    "枠",
    // "呼び出し量のクォータを超えました" (Azure API Management in Japanese).
    "クォータ",
    "割り当て",
    "사용량",
    "할당량",
    "лимит",
    "квот",
    // Localized gateways and apps: Spanish, Portuguese, German, French, Indonesian, Turkish,
    // Vietnamese ("Kuota harian Anda telah habis", "hết lượt sử dụng").
    "cuota",
    "cota",
    "límite",
    "limite",
    "kontingent",
    // "Freikontingent ausgeschöpft" (the free allowance used up).
    "freikontingent",
    "kuota",
    "batas",
    // Turkish's quota only inflected: a bare "kota" is a city in Indonesian and Malay.
    "kotanız",
    "kotası",
    "limitiniz",
    "limitinize",
    "hạn mức",
    "hạn ngạch",
    "lượt sử dụng",
    // Free turns (vi), a quota (fi), a usage limit (ms/id).
    "lượt miễn phí",
    "kiintiö",
    "had penggunaan",
    "batas penggunaan",
    // "일일 허용 호출 건수(10,000건)를 초과했습니다": the calls a day allows.
    "허용량",
    "허용 호출",
    "호출 건수",
    "호출 횟수",
    // A quota or a limit in el, cs, sk, hu, ro, sv, nl, fa, he, bn, ta, sw and more ar, hi, th, ru,
    // uk.
    "kvót",
    "kvot",
    "kvoten",
    "quotum",
    "cotă",
    // Also a grant's words (`GRANT`), kept in step by a unit test.
    "allotment",
    "allotted",
    "额度",
    "額度",
    "제공량",
    "tageskontingent",
    "monatskontingent",
    "מכסת",
    "limită",
    "limita",
    "ποσόστωση",
    "όριο",
    "حصة",
    "الحصة",
    "الحد",
    "سهمیه",
    "محدودیت",
    "מכסה",
    "מגבלת",
    "कोटा",
    "सीमा",
    "কোটা",
    "সীমা",
    "โควตา",
    "ஒதுக்கீடு",
    "வரம்பு",
    "kikomo",
    // Inflected or spelt otherwise: "حصتك", "โควต้า", "місячний ліміт", "a havi keret",
    // "המגבלה החודשית", "kuukausiraja", "maandlimiet".
    "حصت",
    "โควต้า",
    "ліміт",
    "keret",
    "מגבלה",
    "kuukausiraja",
    "päiväraja",
    "maandlimiet",
    "daglimiet",
    "giới hạn sử dụng",
    "limiet",
    "gräns",
    "gränsen",
    "limitu",
    "korlát",
    // An allowance in Hungarian, a limit in sr, hr, sl.
    "keret",
    "keretet",
    "omejitev",
    "ograničenje",
    // Counts and uses of a free allowance in ja, ko, th, ur, ru, uk, de, fr, es, pt, ro, am, ha
    // ("本日の無料利用回数を使い切りました", "Бесплатные запросы на сегодня закончились",
    // "Vous avez épuisé vos utilisations gratuites").
    "回数",
    "횟수",
    "สิทธิ์",
    "استعمال",
    "запрос",
    "запит",
    "kontingent",
    "utilisations",
    "anfragen",
    "usos",
    "utilizările",
    "utilizări",
    "አጠቃቀም",
    "amfani",
    // A limit or a quota in gu, kn, ml, or, ur, bn.
    "મર્યાદા",
    "ಮಿತಿ",
    "പരിധി",
    "ക്വോട്ട",
    "ସୀମା",
    "حد",
    "কোটা",
    "সীমা",
    // A plan's package (mn: "Сарын багцын токен дууссан"), limit (sw, ha, zu, rw, so).
    "багц",
    "iyaka",
    "iyakar",
    "umkhawulo",
    "umupaka",
    "xadka",
    // A prepaid resource pack or package (Kling: "The resource pack for kling-v2-1 video
    // generation is depleted or expired").
    "resource pack",
    "resource packs",
    "resource package",
    "resource packages",
    // A package of requests or generations, a trial period (ru).
    "пакет",
    "генерац",
    "пробный период",
    // An entitlement (Salesforce's Einstein Requests, ServiceNow's assists).
    "entitlement",
    "entitlements",
];

/// Used up.
const USED_UP: &[&str] = &[
    "reached",
    // "You have hit your plan's request quota".
    "hit",
    "exceeded",
    "exceeds",
    "out of",
    "exhausted",
    "used up",
    "run out",
    "ran out",
    "depleted",
    // "You have used all of your free requests".
    "used all",
    // "No quota left for token consumption".
    "no quota",
    "used its entire",
    "used your entire",
    "used the entire",
    // "This key has a lifetime cap of 1M tokens and it has been consumed", "The remaining quota
    // on this key is 0".
    "consumed",
    "is 0",
    "is zero",
    "达到",
    "達到",
    "도달",
    "已用完",
    "已用尽",
    // "业务量超过限制" (iFlytek 11200: the volume granted is exceeded); not a bare 超过, said
    // of windows and sizes too ("输入token超过模型上下文窗口上限").
    "超过限制",
    "超過限制",
    "已达",
    "已達",
    "用完",
    "超出",
    "到達",
    "達し",
    "使い切",
    "초과",
    "소진",
    "모두 사용",
    "agotado",
    "agotada",
    "excedido",
    "excedida",
    "esgotado",
    "esgotada",
    "atingido",
    // "Você atingiu o limite de mensagens do Codex".
    "atingiu",
    "aufgebraucht",
    "ausgeschöpft",
    "verbruikt",
    "opgebruikt",
    "überschritten",
    "erschöpft",
    "épuisé",
    "épuisée",
    "dépassé",
    "dépassée",
    "habis",
    "terlampaui",
    "ulaştınız",
    "aşıldı",
    "doldu",
    "đã hết",
    "vượt quá",
    // es, pt, fr, de, it, id, tr, vi, pl, uk, th, ar, hi.
    "dùng hết",
    "исчерпан",
    "вичерпан",
    "esaurito",
    "esaurita",
    "raggiunto",
    "alcanzado",
    "alcanzaste",
    "atteint",
    "atteinte",
    "erreicht",
    "tercapai",
    "wyczerpan",
    "przekroczon",
    // Used up or exceeded in el, cs, sk, hu, ro, sv, nl, fa, he, bn, ta, sw and more ar, hi, th,
    // ru, uk.
    "εξαντλήθηκ",
    "εξαντλήσα",
    "ξεπεράσα",
    "vyčerpal",
    "vyčerpán",
    "vyčerpan",
    "překročen",
    "prekročen",
    "elfogyott",
    "kimerült",
    "elérte",
    "túllép",
    "epuizat",
    "epuizată",
    "depășit",
    "förbrukad",
    "förbrukat",
    "överskriden",
    "överskridit",
    "är slut",
    "نفد",
    "استنفد",
    "استنفاد",
    "تجاوزت",
    "تمام شده",
    "به پایان رسید",
    "נוצל",
    "נגמר",
    "מוצתה",
    "חרגת",
    "শেষ",
    "অতিক্রম",
    "தீர்ந்த",
    "முடிந்த",
    "மீறப்",
    "समाप्त",
    "खत्म",
    "ख़त्म",
    "หมด",
    "imeisha",
    "umefikia",
    "umemaliza",
    // Ended or reached in he, sr, hr, sl.
    "הסתיימ",
    "dostignut",
    "dosežen",
    "iskorišćen",
    "iskorišten",
    "porabljen",
    // Used up in ja, ko, ru, uk, de, fr, es, ur, am, ha.
    "使い切",
    "모두 사용",
    "закончил",
    "вичерпано",
    "aufgebraucht",
    "verbraucht",
    "épuisé",
    "agotaste",
    "agotado",
    "ختم",
    "አልቋል",
    "ta kare",
    // "token allowance spent".
    "spent",
    // "The embeddings you get each month are all used", "fully consumed", "today's allowance
    // is gone", "Trial quota of this account is finished".
    "all used",
    "fully used",
    "fully consumed",
    "is gone",
    "are gone",
    "finished",
    // Ran out in pt, es, kk, uz.
    "acabou",
    "agotó",
    "esgotou",
    "таусыл",
    "tugadi",
    // Reached or full (he, fi): "הגעת למגבלה", "Kuukausiraja on täynnä".
    "הגעת",
    "täynnä",
    // Used up (fi), reached (ms/id): "Päivittäinen kiintiösi on käytetty loppuun", "Had
    // penggunaan bulanan anda telah dicapai".
    "käytetty loppuun",
    "loppuun",
    "dicapai",
    "ubos",
    // Used up or finished in mr, gu, kn, ml, or, bn, ur and Hinglish.
    "संपला",
    "संपले",
    "પૂરી થઈ",
    "ಮುಗಿದಿದೆ",
    "ಮುಗಿದಿವೆ",
    "തീർന്നു",
    "ଶେଷ",
    "শেষ",
    "ختم",
    "khatam",
    "khatm",
    "use ho chuke",
    // Finished in mn, so.
    "дууссан",
    "dhammaatay",
    // Ended, expired (ru); not "завершения" (a completion awaited).
    "завершён",
    "период завершен",
    "истёк",
    "истек",
    // Finished (wo).
    "jeex",
];

/// Words of a rate: "Rate limit reached for requests" is a rate limit, however it is worded.
const RATE: &[&str] = &[
    "rate",
    // A rate's ceiling reached is no allowance used up ("您的速率达到上限", "請求頻率").
    "速率",
    "频率",
    "頻率",
    // "リクエストレートの上限に達しました" (ja), "요청 속도 제한" (ko), "同時実行数の上限".
    "レート",
    "속도",
    "同時実行",
    "qps",
    "rps",
    "rpm",
    "tpm",
    // A limit of what serves ("worker local request limit reached") is capacity, not an
    // allowance.
    "worker",
    "workers",
    "server",
    "servers",
    "instance",
    "node",
    "replica",
    "replicas",
    // "inference pool limit exceeded", Envoy's "reset reason: overflow (circuit breaker limit
    // exceeded)": what serves is full.
    "pool",
    "circuit breaker",
    "connections",
    "サーバー",
    "サーバ",
    "服务器",
    "伺服器",
    "서버",
    "сервер",
    // "Open api request limit reached by resource cluster" (Qianfan): what serves is full.
    "cluster",
    "gpu",
    "hourly",
    "per hour",
    "an hour",
    "minute",
    "minutes",
    "seconds",
    // Seconds in fr, es, pt, it, de, ru, tr, vi, id, pl ("Réessayez dans quelques secondes");
    // not minutes, which a long wait states beside its hours ("en 3 horas 12 minutos").
    "secondes",
    "segundos",
    "secondi",
    "sekunden",
    "секунд",
    "saniye",
    "giây",
    "detik",
    "sekund",
    "requests per",
    "too many requests",
    "concurrent",
    "concurrency",
    "frequency",
    // "LB bandwidth limit exceeded": bytes per second; "Burst limit exceeded".
    "bandwidth",
    "burst",
    "带宽",
    "頻寬",
    "帯域",
    "대역폭",
    "频率",
    "頻率",
    "并发",
    "並發",
    // Requests of the caller's own in flight: "同時実行数の上限", "동시 요청".
    "同時実行",
    "同時接続",
    "同時リクエスト",
    "동시 요청",
    "동시 실행",
    "동시 접속",
    // A spacing between calls ("Aguarde 3 segundos entre mensagens").
    "between messages",
    "between requests",
    "entre mensagens",
    "entre mensajes",
    "entre solicitudes",
    "entre requisições",
];

/// An allowance used up ("usage limit reached", "quota exceeded", "次数已用完"), when no message
/// speaks of a rate or a short window.
pub fn allowance_used_up_in(messages: &[String]) -> Option<String> {
    used_up_in(messages, ALLOWANCE, "allowance")
}

/// A word of `family` near a used-up word in some message, when no message speaks of a rate or
/// a short window.
fn used_up_in(messages: &[String], family: &[&str], name: &str) -> Option<String> {
    used_in(messages, family, USED_UP, name)
}

/// A word of `family` near a word of `used` in some message, when no message speaks of a rate
/// or a short window.
fn used_in(messages: &[String], family: &[&str], used: &[&str], name: &str) -> Option<String> {
    // "Maximum content size limit (26214400) exceeded (26843611 bytes read)": a body's size;
    // "exceeded retry limit, last status: 503": a client's own retries.
    // "container exceeded memory limit of 32768 MiB": a machine's memory.
    const SIZE_LIMIT: &[&str] = &[
        "size limit",
        "bytes",
        "retry limit",
        "memory limit",
        "memory",
    ];
    let rate = |m: &String| {
        speaks_of_rate(m) || first(m, CONCURRENT).is_some() || first(m, SIZE_LIMIT).is_some()
    };
    if messages.iter().any(rate) {
        return None;
    }
    messages
        .iter()
        .find_map(|m| named_pair(m, family, used, name))
}

/// Whether a message speaks of a rate or a short window (stated in words or with its number).
fn speaks_of_rate(message: &str) -> bool {
    short_window(message) || timed_window_in(message) || first(message, RATE).is_some()
}

/// What an account is granted, not a bound on a field ("quota", not "limit").
const GRANT: &[&str] = &[
    "quota",
    "allowance",
    "allocation",
    "usage limit",
    "usage cap",
    "allotment",
    "allotted",
    "credits",
    // "Out of premium requests": the requests a plan grants, counted by the month.
    "premium requests",
    "premium request",
    // "The number of requests for this API key has reached its cap".
    "its cap",
    // "Key limit exceeded (daily limit)" (OpenRouter), "Unauthorized - Key limit-exceeded" (a
    // gateway's spend cap on a key): what a key may spend, not a field's bound.
    "key limit",
    "your cap",
    "配额",
    "配額",
    "额度",
    "額度",
    "用量",
    "使用量",
    "無料枠",
    "利用枠",
    "クォータ",
    "割り当て",
    "사용량",
    "할당량",
    // "이번 달 무료 제공량을 모두 사용했습니다" (this month's free allowance is used up).
    "제공량",
    "cuota",
    "cota",
    "kontingent",
    // German compounds: a day's or a month's allotment ("Tageskontingent ... aufgebraucht").
    "tageskontingent",
    "monatskontingent",
    "kuota",
    "kotanız",
    "hạn ngạch",
    "lượt sử dụng",
    // A quota in el, cs, sk, hu, ro, sv, nl, fa, he, bn, ta, sw and more ar, hi, th, ru, uk.
    "квот",
    "kvót",
    "kvot",
    "kvoten",
    "quotum",
    "cotă",
    "ποσόστωση",
    "όριο χρήσης",
    "حصة",
    "الحصة",
    "سهمیه",
    "מכסה",
    "कोटा",
    "কোটা",
    "โควตา",
    "ஒதுக்கீடு",
    // A quota in Hebrew, construct state.
    "מכסת",
];

/// Whether some message speaks of requests or sessions in flight ("concurrent agent session
/// limit reached (5)"): a limit that the caller's own work frees, whatever else it is called.
pub fn concurrency_in(messages: &[String]) -> bool {
    messages.iter().any(|m| first(m, CONCURRENT).is_some())
}

/// The first word of a grant ("quota", "usage limit", "额度") in some message.
pub fn grant_named_in(messages: &[String]) -> Option<&'static str> {
    messages.iter().find_map(|m| first(m, GRANT))
}

/// A grant used up ("This request exceeds your quota of 10000", "Out of call volume quota"),
/// when no message speaks of a rate or a short window: what beats a weak signal (a 401/403
/// status, a generic code), where a bare "limit exceeded" is as often a field's bound.
pub fn grant_used_up_in(messages: &[String]) -> Option<String> {
    used_up_in(messages, GRANT, "grant")
        .or_else(|| used_in(messages, GRANT, GRANT_EXCEEDED, "grant"))
        .or_else(|| used_in(messages, COUNTED, GONE, "counted allowance"))
        .or_else(|| free_allowance_used_up(messages))
        .or_else(|| used_in_full(messages))
}

/// An amount used that equals the amount granted ("Team 'x' has used $2,000.00 of its
/// $2,000.00 monthly LLM budget", "You have used 50 of 50 requests"), when no message speaks
/// of a rate or a short window.
fn used_in_full(messages: &[String]) -> Option<String> {
    fn amount(text: &str) -> Option<(&str, &str)> {
        let text = text.trim_start_matches(['$', '€', '£', '¥']);
        let end = text
            .find(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
            .unwrap_or(text.len());
        let (number, rest) = text.split_at(end);
        let number = number.trim_end_matches(['.', ',']);
        number
            .starts_with(|c: char| c.is_ascii_digit())
            .then_some((number, rest))
    }
    let in_full = |m: &String| {
        phrase_offsets(m, "used").any(|at| {
            let after = m.get(at + "used".len()..).unwrap_or_default().trim_start();
            let Some((used, rest)) = amount(after) else {
                return false;
            };
            let Some(rest) = rest.trim_start().strip_prefix("of ") else {
                return false;
            };
            let rest = ["its ", "your ", "the ", "their "]
                .iter()
                .find_map(|p| rest.strip_prefix(p))
                .unwrap_or(rest);
            amount(rest).is_some_and(|(granted, _)| granted == used)
        })
    };
    // The windows are looked for only once an amount used in full is there.
    (messages.iter().any(in_full) && !messages.iter().any(|m| speaks_of_rate(m)))
        .then(|| "concept used in full".to_owned())
}

/// Exceeded, said of a grant in Chinese and Japanese ("クォータを超えました", "配额超过"); not
/// of any limit, since "1時間あたりのリクエスト上限を超えました" is a window and "上限を超えています"
/// a prompt's size.
const GRANT_EXCEEDED: &[&str] = &["超え", "超過", "超过"];

/// What is given away: a free allowance never refills within minutes.
const FREE: &[&str] = &[
    "free",
    "trial",
    "免费",
    "免費",
    "試用",
    "无料",
    "無料",
    "무료",
    // Free in fr, es/pt/it, de, ru, uk, tr, vi, th, hi, ar, fa, he, ur, sw, ro, am.
    "gratuit",
    "gratuites",
    "gratuits",
    "gratis",
    "gratuito",
    "gratuitos",
    "gratuitas",
    "gratuite",
    "kostenlos",
    "kostenlosen",
    "бесплатн",
    "безкоштовн",
    "ücretsiz",
    "miễn phí",
    "ฟรี",
    "मुफ्त",
    "मुफ़्त",
    "مجاني",
    "رایگان",
    "חינם",
    "مفت",
    "bure",
    "ነጻ",
];

/// A free or trial allowance used up ("Limit of 5 free images reached"), when no message speaks
/// of a rate or a short window.
fn free_allowance_used_up(messages: &[String]) -> Option<String> {
    let free = messages.iter().find_map(|m| first(m, FREE))?;
    let used = allowance_used_up_in(messages)?;
    Some(format!("{used}, \"{free}\""))
}

/// What is counted out to a caller ("Token count has been exhausted", "call count used up").
const COUNTED: &[&str] = &[
    "count",
    "counts",
    "calls",
    "uses",
    "requests",
    "messages",
    "generations",
    "queries",
    // "Your organization has run out of tokens" (a size is "exceeded", never "run out").
    "tokens",
];

/// Gone, as a grant is; a size is "exceeded" ("token count exceeds the maximum" is a prompt too
/// large), never "exhausted".
const GONE: &[&str] = &[
    "exhausted",
    "depleted",
    "used up",
    "run out",
    "ran out",
    "used all",
    // "You have consumed all included tokens for your plan".
    "consumed all",
    // "You have no more generations left".
    "no more",
];

/// Whether a message speaks of a limit, quota or allowance at all.
pub fn allowance_word_in(message: &str) -> bool {
    first(message, ALLOWANCE).is_some()
}

/// A provider that does not serve the caller's country or region ("Country, region, or
/// territory not supported", "User location is not supported"): the key is sound, no wait helps,
/// another provider's model does.
pub fn geo_blocked(message: &str) -> Option<String> {
    // "free tier is not available in your country. Please enable billing": paying serves.
    // "The model is temporarily unavailable in region us-east5": the region's capacity.
    if has_phrase(message, "billing") || first(message, FOR_NOW).is_some() {
        return None;
    }
    named_pair(message, GEO, NOT_SERVED, "place")
}

/// A model kept for another plan ("Model requires a Pro subscription"): another model serves.
fn model_needs_plan(message: &str) -> Option<String> {
    let (model, requires) = near(message, MODEL, REQUIRES).or_else(|| {
        // "Your plan does not include access to gpt-4o": the model named by its id.
        let id = model_id_in(message)?;
        Some((id, first(message, REQUIRES)?))
    })?;
    let plan = first(message, PLAN)?;
    // "this model requires a subscription: you've used your included cloud usage for this
    // week": the plan's allowance is used up, whichever model is asked for.
    if first(message, super::LONG_WINDOW).is_some() {
        return None;
    }
    Some(format!(
        "concept model \"{model}\" + \"{requires}\" + \"{plan}\""
    ))
}

/// Whether a message states a width by a height in pixels ("2048x2048", "1024x768"): two
/// runs of digits around an `x`, the first of two digits or more (not a hex prefix, `0x7f`).
fn dimensions_in(message: &str) -> bool {
    let bytes = message.as_bytes();
    bytes.iter().enumerate().any(|(at, b)| {
        *b == b'x'
            && at
                .checked_sub(2)
                .and_then(|from| bytes.get(from..at))
                .is_some_and(|before| before.iter().all(u8::is_ascii_digit))
            && bytes.get(at + 1).is_some_and(u8::is_ascii_digit)
    })
}

/// The request fields that bound a model's output.
const OUTPUT_FIELDS: &[&str] = &[
    "max_tokens",
    // Camel-cased, as SDKs and Bedrock's Titan spell them (`maxTokens`, `maxTokenCount`).
    "maxtokens",
    "maxtokencount",
    "max_completion_tokens",
    "max_output_tokens",
    "maxoutputtokens",
    "max_new_tokens",
    "num_predict",
];

/// An output bound asked above the model's, told by its numbers in any language: the field,
/// the value asked, then a smaller bound ("max_tokens (32768) přesahuje maximální délku výstupu
/// modelu (16384 tokenů)", "قيمة max_tokens (64000) أكبر من ... (8192)"), or a range from 1 to
/// the bound ("maxOutputTokens es 100000 y el rango admitido es de 1 a 65537"). Not a negative
/// value, nor numbers of other fields between ("max_tokens=1024, top_k=40"), nor a value that
/// did not parse ("invalid type: string \"4096\", expected u32").
fn output_bound_exceeded(message: &str) -> Option<String> {
    // The field first: most messages name none, and the guards cost more than its look-up.
    let (field, at) = super::pairs::with(message, |held| {
        OUTPUT_FIELDS
            .iter()
            .filter(|f| held.may_hold(f))
            .find_map(|f| Some((*f, message.find(f)?)))
    })?;
    if rate_window(message) || has_phrase(message, "invalid type") {
        return None;
    }
    let rest = message.get(at + field.len()..)?;
    let numbers = leading_numbers(rest, 3)?;
    let &(asked, _, asked_end) = numbers.first()?;
    // A range's lower end (1) is no bound: the one after it is.
    let &(bound, bound_start, _) = numbers.iter().skip(1).find(|(n, ..)| *n >= 16)?;
    let between = rest.get(asked_end..bound_start)?;
    let near_field = rest.find(|c: char| digit_value(c).is_some())? <= 24;
    let plain = !between.contains(['=', '_']);
    (near_field && plain && asked > bound)
        .then(|| format!("concept \"{field}\" {asked} above its bound {bound}"))
}

/// A decimal digit in ASCII, Arabic-Indic, Persian or Devanagari script.
fn digit_value(c: char) -> Option<u64> {
    let from = |zero: char| u64::from(c as u32 - zero as u32);
    match c {
        '0'..='9' => Some(from('0')),
        '\u{660}'..='\u{669}' => Some(from('\u{660}')),
        '\u{6f0}'..='\u{6f9}' => Some(from('\u{6f0}')),
        '\u{966}'..='\u{96f}' => Some(from('\u{966}')),
        // Bengali, Gujarati, Kannada, Malayalam, Odia.
        '\u{9e6}'..='\u{9ef}' => Some(from('\u{9e6}')),
        '\u{ae6}'..='\u{aef}' => Some(from('\u{ae6}')),
        '\u{ce6}'..='\u{cef}' => Some(from('\u{ce6}')),
        '\u{d66}'..='\u{d6f}' => Some(from('\u{d66}')),
        '\u{b66}'..='\u{b6f}' => Some(from('\u{b66}')),
        _ => None,
    }
}

/// The first `count` whole numbers of `text` (thousands written with `,`, `.` or a space between
/// groups of three), each with where it starts and ends; `None` if the first is negative or
/// part of a name ("expected u32"). Digits inside later names are skipped.
fn leading_numbers(text: &str, count: usize) -> Option<Vec<(u64, usize, usize)>> {
    const SEPARATORS: &[char] = &[',', '.', ' ', '\u{a0}', '\u{202f}', '\u{66c}'];
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let is_digit = |i: usize| chars.get(i).is_some_and(|(_, c)| digit_value(*c).is_some());
    let mut found = Vec::with_capacity(count);
    let mut i = 0;
    while i < chars.len() && found.len() < count {
        if !is_digit(i) {
            i += 1;
            continue;
        }
        let before = i.checked_sub(1).and_then(|j| chars.get(j)).map(|(_, c)| *c);
        let named = before.is_some_and(char::is_alphabetic);
        if found.is_empty() && (before == Some('-') || named) {
            return None;
        }
        let start = chars.get(i).map(|(at, _)| *at)?;
        let mut value: u64 = 0;
        while i < chars.len() {
            if let Some(d) = chars.get(i).and_then(|(_, c)| digit_value(*c)) {
                value = value.saturating_mul(10).saturating_add(d);
                i += 1;
            } else if chars.get(i).is_some_and(|(_, c)| SEPARATORS.contains(c))
                && (1..=3).all(|k| is_digit(i + k))
                && !is_digit(i + 4)
            {
                i += 1;
            } else {
                break;
            }
        }
        let end = chars.get(i).map_or(text.len(), |(at, _)| *at);
        if !named {
            found.push((value, start, end));
        }
    }
    Some(found)
}

/// A field of the request, in en, es/pt/it, fr, de, zh.
const FIELD_WORDS: &[&str] = &[
    "field",
    "campo",
    "champ",
    "feld",
    "字段",
    // A parameter, a title, a file name (zh, ja), a field (ru): "参数 user_id 长度超过限制，最大
    // 128 个字符", "對話標題過長，最多 50 個字", "Поле «описание» слишком длинное".
    "参数",
    "參數",
    "标题",
    "標題",
    "ファイル名",
    "поле",
];

/// Characters, in en, es/pt, it, fr, de, zh, ja.
const CHARACTER_WORDS: &[&str] = &[
    "characters",
    "caracteres",
    "caratteri",
    "caractères",
    "zeichen",
    "字符",
    "文字",
    "个字",
    "個字",
    "символ",
];

/// Tokens, in any inflection or script ("70.000 tokens", "82 000 tokenów", "96 000 токенов",
/// "70,000 โทเค็น", "jetons"): matched inside words, since languages inflect them.
const TOKEN_STEMS: &[&str] = &[
    "token",
    "jeton",
    "токен",
    "トークン",
    "토큰",
    "टोकन",
    "توکن",
    "رمز",
    "טוקנ",
    "টোকেন",
    "டோக்கன்",
    "โทเค็น",
    // gu, kn, ml, or, ur.
    "ટોકન",
    "ಟೋಕನ್",
    "ടോക്കൺ",
    "ଟୋକେନ",
    "ٹوکن",
];

/// The tokens a message counts, if it counts any: what a request too large ("Requisição com
/// 61.000 tokens não cabe no limite de 60.000 tokens/minuto") is measured in, when it is the
/// prompt and not the body's bytes.
pub fn token_stem_in(message: &str) -> Option<&'static str> {
    TOKEN_STEMS.iter().find(|t| message.contains(*t)).copied()
}

/// A size word with an excess word, and no rate window ("input exceeds the maximum length",
/// "上下文超出上限").
pub fn too_large(message: &str) -> Option<String> {
    // "Invalid token in prompt: 123456. Minimum value is 0, maximum value is 100257": the range
    // of a value, not the size of a prompt.
    // TGI's "Input validation error: `top_n_tokens` must be <= 5": the input is what was
    // validated, not what is large; a prompt too large names its `inputs` ("`inputs` tokens +
    // `max_new_tokens` must be <= 4096").
    if let Some(rest) = message.strip_prefix("input validation error") {
        return ["inputs", "prompt", "max_model_len"]
            .iter()
            .any(|w| has_phrase(rest, w))
            .then(|| too_large(rest))
            .flatten();
    }
    // The pair first: most messages have none, and the guards below cost more than it.
    let Some((size, excess)) = near(message, SIZE, EXCESS) else {
        return tokens_beyond_model(message)
            .or_else(|| too_big_for_model(message))
            .filter(|_| !not_a_prompt_size(message));
    };
    if not_a_prompt_size(message) {
        return None;
    }
    // "input.num_outputs: Must be less than or equal to 4" (Replicate's validation): a field
    // of the request named by its path, not the size of its input.
    let bound = excess.starts_with("must be") || excess == "less than or equal";
    if bound && phrase_offsets(message, size).all(|at| in_field_path(message, at, size.len())) {
        return None;
    }
    // "The input has too many reference voices", "Слишком много инструментов": too many of
    // something, not of tokens.
    const UNITS: &[&str] = &["characters", "bytes"];
    let counted = token_stem_in(message).is_some() || first(message, UNITS).is_some();
    if matches!(excess, "too many" | "слишком много") && !counted {
        return None;
    }
    Some(format!("concept size \"{size}\" + \"{excess}\""))
}

/// A count of tokens set against what a model can take, in words no size pair holds ("This
/// model can only see 8,000 tokens at a time", "come to 17,902 tokens; this model only looks
/// at 16,384").
fn tokens_beyond_model(message: &str) -> Option<String> {
    const BOUND: &[&str] = &[
        "only",
        "at most",
        "more than",
        "bigger than",
        "larger than",
        "beyond",
        "no room",
        "no space",
        "reading limit",
        // "this model tops out at 1,048,576", "more than Claude Haiku can hold", "will not fit
        // in the 16k this model reads".
        "tops out",
        "can hold",
        "can attend",
        "can process",
        "can read",
        "can generate",
        "fit",
    ];
    if !message.contains("token") || !counts_tokens(message) {
        return None;
    }
    // The English words a local message keeps ("Ujumbe ni mrefu mno: umezidi kikomo cha
    // context cha model (8192 tokens)"): the model's context and a count are the bound.
    let bound = first(message, BOUND).or_else(|| first(message, &["context"]))?;
    // The model, or the window it reads ("leaves nothing under the 32k window").
    first(message, &["model", "window"])?;
    Some(format!(
        "concept tokens counted + \"{bound}\" a model takes"
    ))
}

/// Something of the caller's too big for the model itself, in plain words ("Message is longer
/// than the model can handle", "The spreadsheet you pasted is too big for this model",
/// "document too long for model"): the excess is set against the model, a few plain words
/// after it. Not media ("image too large for this model" is shrunk, not moved), not "more than
/// one model".
fn too_big_for_model(message: &str) -> Option<String> {
    const EXCESS: &[&str] = &[
        "too long for",
        "too big for",
        "too large for",
        "longer than",
        "bigger than",
        "larger than",
        "more than",
    ];
    const FILLER: &[&str] = &[
        "the", "this", "that", "your", "our", "a", "selected", "current", "chosen",
    ];
    const MEDIA: &[&str] = &[
        "image",
        "images",
        "audio",
        "video",
        "pixels",
        "file size",
        "resolution",
        "duration",
    ];
    const WAITED: &[&str] = &["waited", "waiting", "took", "taking", "time"];
    if !message.contains("model") {
        return None;
    }
    let against_model = |rest: &str| {
        for word in rest.split_whitespace().take(4) {
            let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
            if word == "model" || word == "model's" {
                return true;
            }
            if !FILLER.contains(&word) {
                return false;
            }
        }
        false
    };
    let excess = EXCESS.iter().find(|e| {
        phrase_offsets(message, e).any(|at| message.get(at + e.len()..).is_some_and(against_model))
    })?;
    // "Gateway waited too long for the model": a time, not a size.
    if first(message, MEDIA)
        .or_else(|| first(message, WAITED))
        .is_some()
    {
        return None;
    }
    Some(format!("concept \"{excess}\" the model"))
}

/// Whether a number of tokens is stated ("8,000 tokens", "16k tokens", "4096 tokens").
fn counts_tokens(message: &str) -> bool {
    let counted = |unit| {
        word_offsets(message, unit).any(|at| {
            let before = message.get(..at).unwrap_or_default().trim_end();
            let before = before.strip_suffix(['k', 'm']).unwrap_or(before);
            before.ends_with(|c: char| c.is_ascii_digit())
        })
    };
    counted("tokens") || counted("token")
}

/// Why a size pair is not a prompt too large: a rate, a grant, a wait, a field, a range.
fn not_a_prompt_size(message: &str) -> bool {
    // "Processing time exceeded the model timeout length": a time, not a size.
    // "Token quota exceeded for this month", "今月のトークン上限に達しました": a grant, not a
    // window of context.
    // "Usage limit of 2,000,000 tokens exceeded for api key x. The limit resets on 2026-03-01":
    // a grant's tokens, with its reset date.
    const GRANTED: &[&str] = &[
        "quota",
        "quotas",
        "usage limit",
        "usage limits",
        "配额",
        "配額",
        "クォータ",
        "할당량",
        "квот",
    ];
    rate_window(message)
        || short_window(message)
        || timed_window_in(message)
        || first(message, BILLING).is_some()
        || first(message, GRANTED).is_some()
        || first(message, super::LONG_WINDOW).is_some()
        || reset_date_in(message).is_some()
        || has_phrase(message, "minimum value")
        // "上游服务响应超时（超过 600 秒），请缩短输入": a time over its limit, not an input.
        || ["timeout", "timed out", "took too long", "超时", "超時", "タイムアウト", "시간 초과"]
            .iter()
            .any(|t| has_phrase(message, t))
        // "Content-Length header value 4194305 exceeds configured max_request_body_size": the
        // body's bytes, as a proxy counts them.
        || has_phrase(message, "content-length")
        // "Token limit is exceeded. Try again in 42 seconds": no wait shrinks a prompt.
        || ["try again in", "retry in", "retry after", "please wait"]
            .iter()
            .any(|t| has_phrase(message, t))
        // "batch size ... should not be larger than 20": a count of inputs per call; not
        // llama.cpp's "physical batch size", the tokens of one input it takes at once ("input
        // is too large to process. increase the physical batch size").
        || (has_phrase(message, "batch size") && !has_phrase(message, "physical batch size"))
        // "prompt injection score 94 exceeds threshold": a guard's score, not a size.
        || has_phrase(message, "threshold")
        // "it looked too much like copyrighted text": a filter's verdict, not a size.
        || has_phrase(message, "copyrighted")
        // Pydantic's "temperature: Input should be less than or equal to 2": a field's value.
        || has_phrase(message, "input should be")
        // "Invalid 'tools': array too long. Expected an array with maximum length 128": a
        // field's count of items; "Exceeded string value length" (Apigee's JSON threat
        // protection): a field's length.
        || has_phrase(message, "array")
        || has_phrase(message, "string value")
        // "Invalid 'messages[2].content': string too long. Expected a string with maximum
        // length 10485760": one field's length in characters.
        || has_phrase(message, "string too long")
        // "1日のトークン上限を超えました。明日 0 時にリセットされます": a day's grant.
        || retry_days_later(message).is_some()
        // "parameter.chat.max_tokens 取值超出范围": a value out of its range.
        || ["out of range", "范围", "範圍"]
            .iter()
            .any(|w| has_phrase(message, w))
        // "The batch input file is larger than the 200 MB limit": a size in bytes, not tokens.
        || (bytes_stated(message) && !has_phrase(message, "tokens") && !has_phrase(message, "token"))
        // "input size exceed limit 2048x2048": an image's dimensions in pixels.
        || dimensions_in(message)
        // "The field 'name' exceeds the maximum length of 64 characters", "Il campo 'name' del
        // messaggio supera la lunghezza massima di 64 caratteri": one field's length.
        || (first(message, FIELD_WORDS).is_some() && first(message, CHARACTER_WORDS).is_some())
}

/// Whether the word at `at..at + len` is a segment of a dotted field path (`input.width`,
/// `generation_config.input`).
fn in_field_path(message: &str, at: usize, len: usize) -> bool {
    let bytes = message.as_bytes();
    let segment = |i: Option<&u8>| i.is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_');
    let after = bytes.get(at + len) == Some(&b'.') && segment(bytes.get(at + len + 1));
    let before = at > 1 && bytes.get(at - 1) == Some(&b'.') && segment(bytes.get(at - 2));
    after || before
}

/// Units of bytes.
const BYTE_UNITS: &[&str] = &[
    "bytes",
    "kb",
    "mb",
    "gb",
    "kib",
    "mib",
    "gib",
    "字节",
    "位元組",
    "バイト",
    "바이트",
];

/// Whether a message names a unit of bytes.
pub fn byte_unit_in(message: &str) -> bool {
    BYTE_UNITS.iter().any(|u| has_phrase(message, u))
}

/// Whether a message states a size in bytes: a number, then a unit of bytes ("200 MB", "4096
/// bytes", "10MB").
pub fn bytes_stated(message: &str) -> bool {
    let bytes = message.as_bytes();
    BYTE_UNITS.iter().any(|u| {
        super::occurrences(bytes, u.as_bytes()).any(|at| {
            let ends_word = !bytes
                .get(at + u.len())
                .is_some_and(u8::is_ascii_alphanumeric);
            let before = message.get(..at).unwrap_or_default().trim_end();
            ends_word && before.ends_with(|c: char| c.is_ascii_digit())
        })
    })
}

/// A gateway's content guard.
const GUARDRAIL: &[&str] = &[
    "guardrail",
    "guardrails",
    // Kong's "semantic prompt guard", Higress's `ai-prompt-guard`.
    "prompt guard",
    // "the request was rejected by the content filter" (openai-python's
    // `ContentFilterFinishReasonError`).
    "content filter",
    "inhaltsmoderation",
    "moderation policy",
    "content policy",
    "safety policy",
    // Content policy in es, pt, fr, de, it, id, tr, vi.
    "política de contenido",
    "política de conteúdo",
    "politique de contenu",
    "inhaltsrichtlinie",
    "politica dei contenuti",
    "kebijakan konten",
    "içerik politika",
    "chính sách nội dung",
    // A moderation filter in fr, es, pt, it, de.
    "filtre de modération",
    "filtro de moderación",
    "filtro de moderação",
    "filtro di moderazione",
    "moderationsfilter",
    // A moderation system in fr, es, pt, it, de, id, tr, vi ("bloquée par notre système de
    // modération").
    "système de modération",
    "sistema de moderación",
    "sistema de moderação",
    "sistema di moderazione",
    "moderationssystem",
    "sistem moderasi",
    "moderasyon sistemi",
    "hệ thống kiểm duyệt",
];

/// What a guard did to the request.
const GUARD_ACTED: &[&str] = &[
    "rejected",
    "violated",
    "violation",
    "blocked",
    "intervened",
    "denied",
    "triggered",
    "flagged",
    // Blocked or violated in es, pt, fr, it, de, id, tr, vi, ru, pl.
    "bloqueado",
    "bloqueada",
    "bloqué",
    "bloquée",
    "bloccato",
    "bloccata",
    "blockiert",
    "diblokir",
    "engellendi",
    "bị chặn",
    "заблокирован",
    "zablokowan",
    "viola",
    "viole",
    "verletzt",
    "ihlal",
];

/// A content word with a safety word ("the input was flagged by moderation", "内容违规"), or a
/// guardrail that acted ("Violated guardrail policy").
pub fn refusal(message: &str) -> Option<String> {
    // "Your request was blocked because you are sending too many requests": a rate. "does not
    // comply with the Fair Usage Policy, and your request frequency has been limited": a volume.
    if rate_window(message)
        || [
            "too many requests",
            "fair usage",
            "fair use",
            "excessive requests",
        ]
        .iter()
        .any(|p| has_phrase(message, p))
    {
        return None;
    }
    // "Request blocked by AWS WAF (rule AWSManagedRulesAmazonIpReputationList)", "Azure WAF:
    // The request is blocked": a web firewall's verdict on where the call comes from, unless it
    // names what the prompt held (read below as a guard's words).
    if has_phrase(message, "waf") && first(message, GUARDRAIL).is_none() {
        return None;
    }
    // "Request body violates schema", "Unrecognized request argument supplied: moderation": a
    // request's shape, whatever word it names.
    const SHAPE: &[&str] = &[
        "schema",
        "request argument",
        "unrecognized",
        // "'content_filter_level' is not a recognized parameter".
        "not a recognized",
        "unknown parameter",
        // "Failed to deserialize the JSON body into the target type: safety_settings: unknown
        // field `safety_settings`" (a Rust server's serde).
        "unknown field",
        "failed to deserialize",
        // Pydantic's "moderation: Extra inputs are not permitted", a value outside its enum
        // ("safety_mode must be one of CONTEXTUAL, STRICT, NONE").
        "extra inputs are not permitted",
        "must be one of",
        // Google's checks of a request's fields ("GenerateContentRequest.safety_settings[4]:
        // element predicate failed: $.category in (HarmCategory.HARM_CATEGORY_SEXUALLY_...").
        "element predicate failed",
        "invalid value at",
    ];
    // "The content filtering service is temporarily unavailable": the filter is down, nothing
    // was refused.
    if first(message, SHAPE).is_some() || first(message, FOR_NOW).is_some() {
        return None;
    }
    // "the safety_settings category 'HARM_CATEGORY_TOXICITY' is not supported": a request
    // field named, not a verdict on the content.
    if first(message, &["safety_settings", "safetysettings"]).is_some()
        && first(message, REQUEST_FAULT).is_some()
    {
        return None;
    }
    if let Some((safety, content)) = near(message, SAFETY, CONTENT) {
        return Some(format!("concept safety \"{safety}\" + \"{content}\""));
    }
    // A check the request did not pass names no content ("Failure to pass the risk control
    // system", "未通过审核", Volcengine's visual API "Text Risk Not Pass").
    if let Some((safety, failed)) =
        near(message, SAFETY, NOT_PASSED).or_else(|| near(message, &["risk"], NOT_PASSED))
    {
        return Some(format!("concept safety \"{safety}\" + \"{failed}\""));
    }
    // A request judged a risk ("The request was rejected because it was considered high risk",
    // Moonshot), not an account ("account flagged as high risk" is the caller's standing).
    let risk = ["high risk", "high-risk"]
        .into_iter()
        .find(|p| has_phrase(message, p));
    if let Some(risk) =
        risk.filter(|_| first(message, &["account", "organization", "key"]).is_none())
    {
        return Some(format!("concept safety \"{risk}\""));
    }
    named_pair(message, GUARDRAIL, GUARD_ACTED, "guard").or_else(|| refused_alone(message))
}

/// Words that name a refusal of content by themselves, in the terse lines of small services
/// ("nsfw rejected", "policy violation", "safety check failed", "guardrail tripped", "rejected
/// by moderation"), unless they speak of an account, a key or an address (a caller refused).
fn refused_alone(message: &str) -> Option<String> {
    const ALONE: &[&str] = &[
        "nsfw",
        "by moderation",
        "moderation: rejected",
        "moderation rejected",
        "jailbreak",
        "csam",
        "hate speech",
        "self-harm",
        "guardrail tripped",
        "blocked by guardrail",
        // Anthropic's refusal as a wrapper prints it ("claude refused to continue:
        // stop_reason=refusal").
        "stop_reason=refusal",
        // Safety and content filters, content policies and moderation in da, no, sv, fi, el,
        // de, ru ("Din forespørgsel blev afvist af vores sikkerhedsfilter", "Pyyntö hylättiin
        // sisältökäytännön vastaisena", "заблокировано модерацией").
        // ASCII words match whole: their definite and plural forms are listed.
        "sikkerhedsfilter",
        "sikkerhedsfilteret",
        "sikkerhetsfilter",
        "sikkerhetsfilteret",
        "säkerhetsfilter",
        "indholdsfilter",
        "indholdsfilteret",
        "innholdsfilter",
        "innholdsfilteret",
        "innehållsfilter",
        "sisältökäytän",
        "sisältösuodat",
        "πολιτικής περιεχομένου",
        "inhaltsrichtlinie",
        "inhaltsrichtlinien",
        "модерацией",
        // Prompt injection detected, in Japanese ("プロンプトインジェクションの可能性が検出された").
        "プロンプトインジェクション",
        // "This content cannot be generated because it may infringe third-party intellectual
        // property".
        "infringe",
        "infringes",
        "infringement",
        "content guard",
        "policy violation",
        "safety check",
        "safety filter",
        "safety system",
        "safety rules",
        "content review",
        "responsible-ai",
        "responsible ai",
        "harassment",
        "mature topic",
        "mature content",
        "child-safe",
        // A content check or safety filter by its own name in de, nl, it, fr, es, pt.
        "inhaltsprüfung",
        "veiligheidsfilter",
        "filtro di sicurezza",
        "filtre de sécurité",
        "filtro de seguridad",
        "filtro de segurança",
        // A (safety or content) policy broken, in si, my, am, ne, mn, lo, zu, uz, kk, az, hy, te,
        // ka, km, pa, ha, yo, ta ("Таны хүсэлт аюулгүй байдлын бодлогыг зөрчсөн").
        "ප්‍රතිපත්තිය උල්ලංඝනය",
        "မူဝါဒကို ချိုးဖောက်",
        "መመሪያችንን ስለሚጥስ",
        "नीतिको उल्लङ्घन",
        "бодлогыг зөрчсөн",
        "ລະເມີດນະໂຍບາຍ",
        "iphula inqubomgomo",
        "siyosatiga zid",
        "саясатын бұз",
        "siyasətini poz",
        "քաղաքականությունը",
        "విధానాన్ని ఉల్లంఘి",
        "პოლიტიკას არღვევ",
        "រំលោភគោលការណ៍",
        "ਨੀਤੀ ਦੀ ਉਲੰਘਣਾ",
        "ya saba wa manufofin",
        "ó rú òfin",
        "கொள்கையை மீறு",
        "blocked by filter",
        "blocked keyword",
        "forbidden content",
        "flagged",
        // What a refusal names in plain words: "We can't make images of real people",
        // "crosses our community standards", "breaks the house rules", "Request declined by
        // policy", "the rest of this answer was withheld".
        "real people",
        "real person",
        "public figure",
        "public figures",
        "community standards",
        "community guidelines",
        "community rules",
        "house rules",
        "our rules",
        "by policy",
        "off-limits",
        "withheld",
        "nudity",
        "sexual",
        "graphic violence",
        "deepfake",
        "impersonate",
        "copyrighted",
        "trust & safety",
        "trust and safety",
        // Content rules or policy in ha, zu, xh, rw, uz, km.
        "ƙa'idojin abun ciki",
        "inqubomgomo yokuqukethwe",
        "umgaqo-nkqubo womxholo",
        "amabwiriza agenga ibirimo",
        "kontent siyosatini",
        "kontent siyosati",
        "គោលការណ៍ខ្លឹមសារ",
        // A content policy, acceptable use, forbidden content, rejected by moderation (da,
        // pl).
        "indholdspolitik",
        "acceptabel brug",
        "niedozwolone treści",
        "odrzucone przez moderację",
        // Forbidden content, moderation (ka).
        "აკრძალული შინაარსი",
        "მოდერაცი",
    ];
    const CALLER: &[&str] = &[
        "account",
        "organization",
        "org",
        "key",
        "user",
        "access",
        "ip",
        "address",
        "endpoint",
        "service",
        "unavailable",
        "timeout",
        "timed out",
    ];
    let word = first(message, ALONE)?;
    if first(message, CALLER).is_some() {
        return None;
    }
    Some(format!("concept safety \"{word}\""))
}

/// A check not passed.
const NOT_PASSED: &[&str] = &[
    "failure to pass",
    "failed to pass",
    "fail to pass",
    "did not pass",
    "does not pass",
    "not pass",
    "未通过",
    "未通過",
    "不通过",
    "不通過",
    "没有通过",
    "沒有通過",
];

/// What proves who the caller is.
const CREDENTIAL: &[&str] = &[
    "api key",
    "api-key",
    "api_key",
    "apikey",
    "access token",
    // What signs a web client in: "登录失效", "login expired", "cookie invalid".
    "login",
    "cookie",
    "登录",
    "登錄",
    "ログイン",
    "로그인",
    "authorization",
    "bearer",
    // AWS: "The ... AWS access key ID provided does not exist in our records."
    "access key",
    "token",
    "credential",
    "credentials",
    "signature",
    "secret",
    "密钥",
    "密鑰",
    // "签名验证失败": a request's signature.
    "签名",
    "簽名",
    "署名",
    "서명",
    "令牌",
    "鉴权",
    "鑑權",
    "認証",
    "apiキー",
    "인증",
    "api 키",
    "ключ",
    "токен доступа",
    "авторизац",
    // Keys and tokens in es, pt, de, fr, it, nl, pl, tr, vi, id, th, ar, hi, he, fa, zh-Hant
    // ("Clave de acceso no válida", "Ungültiger Zugangsschlüssel", "授權失敗：金鑰已被撤銷").
    "clave de acceso",
    "clave de api",
    "clave api",
    "chave de acesso",
    "chave de api",
    "chave da api",
    "zugangsschlüssel",
    "api-schlüssel",
    "clé api",
    "clé d'api",
    "clé d'accès",
    "jeton d'authentification",
    "jeton d'accès",
    "chiave di accesso",
    "chiave api",
    "toegangssleutel",
    "api-sleutel",
    "klucz api",
    "klucz dostępu",
    "erişim anahtarı",
    "api anahtarı",
    "khóa truy cập",
    "khóa api",
    "kunci api",
    "kunci akses",
    "คีย์",
    "مفتاح",
    "कुंजी",
    "מפתח",
    "کلید",
    "金鑰",
    "授權",
    // A product's licence key ("License key not found").
    "license key",
    "licence key",
    // A gateway's own key (LiteLLM's, Portkey's, Bifrost's "virtual key").
    "virtual key",
    // The caller's session, an access token or a signature ("Your session has expired",
    // "세션이 만료되었습니다", "Подпись запроса неверна"); not a session id a request names.
    // Keys in ro, el, no, hu, fi, sl, sk, cs: "Cheia API a expirat", "Μη έγκυρο κλειδί API".
    "cheia api",
    "cheie api",
    "κλειδί api",
    "api-nøkkel",
    "api-kulcs",
    "api-avain",
    "ključ api",
    "api kľúč",
    "api klíč",
    "your session",
    "votre session",
    "tu sesión",
    "sua sessão",
    "ihre sitzung",
    "세션",
    "アクセストークン",
    "подпись",
];

/// Where a token is a piece of text, not a credential ("Invalid token in prompt: 123456").
const TEXT: &[&str] = &["prompt", "vocabulary", "tokenizer"];

/// Whether a message's "token" is a piece of text ("Invalid token in prompt: 123456").
pub fn text_token(message: &str) -> bool {
    near(message, &["token"], TEXT).is_some()
        // A JSON parser's "Unexpected token } at position 214".
        || has_phrase(message, "unexpected token")
}

/// It does not hold.
const REJECTED: &[&str] = &[
    "invalid",
    "unreadable",
    // "please pass a valid token", "provide a valid API key".
    "a valid",
    // "No valid model provider credentials found".
    "no valid",
    "does not exist in our records",
    "incorrect",
    "expired",
    "revoked",
    // Revoked (zh): "密钥已被吊销".
    "吊销",
    "吊銷",
    // "key deleted", "auth failed".
    "deleted",
    "missing",
    "no longer valid",
    "not valid",
    "not recognised",
    "not recognized",
    "malformed",
    "not found",
    "could not find",
    "not provided",
    // SDKs without a key: "The api_key client option must be set".
    "must be set",
    // A credential for another product: "This credential is only authorized for use with
    // Claude Code and cannot be used for other API requests" (Anthropic's OAuth tokens).
    "only authorized for",
    "cannot be used for",
    "无效",
    "無效",
    "失效",
    "错误",
    "錯誤",
    // "Authorization Token非法".
    "非法",
    // one-api's "该令牌状态不可用" (the token's status is unusable), "令牌已被禁用".
    "状态不可用",
    "狀態不可用",
    "已禁用",
    "已被禁用",
    "已停用",
    "过期",
    "過期",
    "失败",
    "無効",
    "失敗",
    "유효하지 않",
    // Not correct, failed (ko): "인증 실패: API 키가 올바르지 않습니다".
    "올바르지 않",
    "실패",
    "잘못된",
    "만료",
    "неверн",
    "недействител",
    "истек",
    "истёк",
    "некорректн",
    "отсутствует",
    // A sign-in that cannot be renewed ("Your access token could not be refreshed because your
    // refresh token was already used").
    "could not be refreshed",
    "failed to refresh",
    // "SSO session expired; re-authenticate to obtain a new gateway token".
    "re-authenticate",
    "reauthenticate",
    // Invalid, expired, revoked or missing in the same languages.
    "no válida",
    "no válido",
    "inválida",
    "inválido",
    "ungültig",
    "invalide",
    "non valida",
    "non valido",
    "ongeldig",
    "ongeldige",
    "nieprawidłow",
    "geçersiz",
    "không hợp lệ",
    "tidak valid",
    "ไม่ถูกต้อง",
    "غير صالح",
    "अमान्य",
    "לא תקין",
    "نامعتبر",
    "expirada",
    "expirado",
    "abgelaufen",
    "expiré",
    "scaduta",
    "scaduto",
    "manquant",
    "fehlt",
    "撤銷",
    "撤销",
    "kedaluwarsa",
    "หมดอายุ",
    "منتهي الصلاحية",
    // Mismatched (zh), expired (ja, fr), failed (ko).
    "不匹配",
    "有効期限切れ",
    "期限切れ",
    "실패했",
    "a expiré",
    // Invalid or expired in ro, el, no, hu, fi, sl, sk/cs, pl, vi, tr.
    "a expirat",
    "nu este valid",
    "έληξε",
    "μη έγκυρ",
    "ugyldig",
    "utløpt",
    "érvénytelen",
    "lejárt",
    "virheellinen",
    "vanhentunut",
    "ni veljaven",
    "neplatn",
    "wygasł",
    "hết hạn",
    "süresi doldu",
];

/// A credential word with a rejection word ("Access token invalid or no longer valid",
/// "API 키가 유효하지 않습니다").
pub fn credential_rejected(message: &str) -> Option<String> {
    if rate_window(message) || text_token(message) {
        return None;
    }
    let (credential, rejected) = near(message, CREDENTIAL, REJECTED)?;
    // "dùng hết hạn mức token" (vi: the token allowance used up) holds "hết hạn" (expired).
    if rejected == "hết hạn" && message.contains("hạn mức") {
        return None;
    }
    // A thinking block's signature ("Thought signature is not valid", "Invalid `signature` in
    // `thinking` block") is the model's output sent back, not the caller's credential.
    if credential == "signature" && ["thought", "thinking"].iter().any(|w| message.contains(w)) {
        return None;
    }
    Some(format!(
        "concept credential \"{credential}\" + \"{rejected}\""
    ))
}

/// An organization, account or workspace: who a standing applies to.
const HOLDER: &[&str] = &[
    "organization",
    "organisation",
    "account",
    "workspace",
    "tenant",
    "账户",
    "账号",
    "帳戶",
    "帳號",
    "组织",
    "組織",
    "アカウント",
    "계정",
    // An account in es, pt, fr, de/pl, ru, tr, vi, id, th, ar.
    "cuenta",
    "conta",
    "compte",
    "konto",
    "аккаунт",
    "учетная запись",
    "учётная запись",
    "hesabınız",
    "hesap",
    "tài khoản",
    "akun",
    "บัญชี",
    "حسابك",
    "الحساب",
];

/// Its standing was taken away.
const BLOCKED: &[&str] = &[
    "disabled",
    "deactivated",
    "suspended",
    "restricted",
    "banned",
    "terminated",
    "blocked",
    // "Your account has been locked, please contact customer service" (Zhipu 1112).
    "locked",
    "锁定",
    "鎖定",
    "ロック",
    "잠금",
    "잠겼",
    // "Your account has been flagged for policy violations".
    "flagged",
    "禁用",
    "封禁",
    "停用",
    "冻结",
    "凍結",
    "停止",
    "정지",
    // Suspended, disabled or locked in the same languages ("Akun Anda ditangguhkan").
    "suspendida",
    "suspendido",
    "suspensa",
    "suspenso",
    "desactivada",
    "desativada",
    "suspendu",
    "désactivé",
    "gesperrt",
    "deaktiviert",
    "sospeso",
    "заблокирован",
    "askıya alındı",
    "bị khóa",
    "bị đình chỉ",
    "ditangguhkan",
    "dinonaktifkan",
    "ถูกระงับ",
    "معلق",
    "تم تعليق",
    "zawieszone",
    "zablokowane",
];

/// An account or organization disabled, suspended or banned ("This organization has been
/// disabled.", "Organization has been restricted"), when no billing word says it is unpaid (a
/// quota stop, read before this) and no rate word says it is a temporary limit: the key is
/// refused whatever the model.
pub fn account_blocked(message: &str) -> Option<String> {
    if rate_window(message) || first(message, BILLING).is_some() {
        return None;
    }
    named_pair(message, HOLDER, BLOCKED, "holder")
}

/// The caller's network address.
const ADDRESS: &[&str] = &[
    "ip",
    "ips",
    "ip address",
    "source address",
    "client address",
    "ip地址",
    "ip 地址",
    "来源ip",
    "ip 주소",
    "ipアドレス",
];

/// Not let in from there.
const NOT_LET_IN: &[&str] = &[
    "not permitted",
    "not allowed",
    "allowlist",
    "whitelist",
    "allow list",
    "blocklist",
    "blacklist",
    "denied",
    "blocked",
    "forbidden",
    "not authorized",
    "rejected",
    "restricted",
    "不允许",
    "不被允许",
    "白名单",
    "黑名单",
    "禁止",
    "拒绝",
    "許可されていません",
    "허용되지",
];

/// A caller refused by its address ("Access from IP 203.0.113.7 is not permitted by this
/// organization's allowlist", "IP 不在白名单中"): the caller's credentials, whatever the status;
/// not an address slowed for sending too much ("IP blocked for too many requests": a rate), nor
/// an address the request pointed the server at ("connection to private IP is blocked": a base
/// URL the server will not call, a bad request).
pub fn address_refused(message: &str) -> Option<String> {
    const NOT_THE_CALLER: &[&str] = &["too many", "private", "internal", "connection to", "ssrf"];
    if rate_window(message) || NOT_THE_CALLER.iter().any(|w| has_phrase(message, w)) {
        return None;
    }
    named_pair(message, ADDRESS, NOT_LET_IN, "address")
}

/// A caller without the right to what it asked ("No permission to access data", "没有权限"):
/// the key is refused, whatever the model (a message that speaks of a permission is not read as a
/// missing model, [`model_missing`]).
const NO_PERMISSION: &[&str] = &[
    "no permission",
    "permission denied",
    "not have permission",
    "insufficient permission",
    "insufficient permissions",
    // Databases and warehouses (Snowflake: "Insufficient privileges to operate on function").
    "insufficient privilege",
    "insufficient privileges",
    "not enough permissions",
    "lacks permission",
    "missing permission",
    "没有权限",
    "无权限",
    "權限不足",
    "权限不足",
    "無權限",
    "沒有權限",
    "権限がありません",
    "권한이 없",
    // No permission in pl, es, pt, de, fr, it, ru, tr, vi, id, th, ar.
    "brak uprawnień",
    "sin permiso",
    "no tiene permiso",
    "sem permissão",
    "não tem permissão",
    "keine berechtigung",
    "pas l'autorisation",
    "n'avez pas la permission",
    "non autorizzato",
    "nessun permesso",
    "нет доступа",
    "нет прав",
    "yetkiniz yok",
    "không có quyền",
    "tidak memiliki izin",
    "tidak punya izin",
    "ไม่มีสิทธิ์",
    "ليس لديك صلاحية",
    "ليس لديك إذن",
    // ru: "Доступ запрещён: недостаточно прав".
    "недостаточно прав",
    "доступ запрещ",
];

/// A permission the caller lacks, when the message does not also say the thing may be missing
/// ("does not exist (or perhaps you don't have permission to use it?)": the other signals
/// decide).
pub fn permission_denied(message: &str) -> Option<String> {
    if ["does not exist", "not found", "not exist"]
        .iter()
        .any(|w| has_phrase(message, w))
    {
        return None;
    }
    let words = first(message, NO_PERMISSION)?;
    Some(format!("concept permission \"{words}\""))
}

/// A field or the shape of a request, in the languages whose messages name it without an
/// English code ("用户参数值有错误", "消息格式有错误", "パラメーターのエラー").
const REQUEST_FIELD: &[&str] = &[
    "参数",
    "參數",
    "格式",
    "パラメータ",
    "パラメーター",
    "파라미터",
    "매개변수",
    "형식",
];

/// Wrong.
const WRONG: &[&str] = &[
    "错误",
    "錯誤",
    "有误",
    "有誤",
    "异常",
    "異常",
    "不合法",
    "非法",
    "无效",
    "無效",
    "エラー",
    "不正",
    "오류",
    "잘못",
];

/// A validator's words for a field it will not take (pydantic's "api_key: Extra inputs are not
/// permitted", JSON Schema's "Additional properties are not allowed"): whatever the field is
/// named, the request's shape is wrong.
const VALIDATION: &[&str] = &[
    "extra inputs are not permitted",
    "extra fields not permitted",
    "additional properties are not allowed",
    "additional properties not allowed",
    "additional property",
    "unrecognized key",
    "unrecognized keys",
    "unexpected keyword argument",
    // Pydantic's value checks ("Input should be greater than or equal to 1024").
    "input should be",
    // Fields that exclude each other ("Cannot use both json_schema and grammar").
    "mutually exclusive",
    "cannot use both",
    "cannot be used together",
    "cannot be specified together",
    "cannot be combined",
];

/// A wrong field or shape of the request.
pub fn bad_field(message: &str) -> Option<String> {
    if let Some(w) = first(message, VALIDATION) {
        return Some(format!("concept validation \"{w}\""));
    }
    named_pair(message, REQUEST_FIELD, WRONG, "field")
}

/// A valid key without the right to the model it asked for ("API key is valid, but does not
/// have permission to call the requested model"): another model may serve.
pub fn model_permission_denied(message: &str) -> Option<String> {
    const THE_MODEL: &[&str] = &[
        "the requested model",
        // Gemini's "permission to access tuned model tunedModels/x".
        "tuned model",
        "this model",
        "the model",
        "that model",
        // No article in Chinese, Japanese or Korean: "您没有权限访问模型 x".
        "模型",
        "モデル",
        "모델",
        // The model in ar, ru, es, fr, de, it, tr, pt, id, hi ("ليس لديك صلاحية لاستخدام هذا
        // النموذج", "Bu modele erişim yetkiniz bulunmamaktadır").
        "النموذج",
        "модел",
        "este modelo",
        "ce modèle",
        "dieses modell",
        "questo modello",
        "modele",
        "modeline",
        "esse modelo",
        "model ini",
        "मॉडल",
    ];
    /// Kept from this caller ("Model access denied", "must be verified to use the model").
    const DENIED: &[&str] = &[
        "access denied",
        "restricted",
        // Vertex's organization policy: "attempting to use a disallowed Gen AI model".
        "disallowed",
        "must be verified",
        "not allowed to use",
        "not permitted to use",
        "not authorized to use",
        "not authorized to access",
        "访问权限",
        "訪問權限",
        "无权",
        "無權",
        "권한이 없",
        // Not opened for this account or key, or no access to it (zh, ru, es, pt, fr, de, id,
        // tr, hi, sw): "您的帳戶尚未開通此模型的使用權限", "Модель не подключена для вашего
        // аккаунта", "No tienes acceso a este modelo".
        "尚未開通",
        "尚未开通",
        "未开通",
        "未開通",
        "не подключена",
        "нет доступа",
        // Access denied, restricted (pt, es: "Acesso negado ao modelo", "Modelo restrito").
        "acesso negado",
        "acceso denegado",
        "restrito",
        "restringido",
        "no tienes acceso",
        "no tiene acceso",
        "não tem acesso",
        "n'avez pas accès",
        "keinen zugriff",
        "tidak memiliki akses",
        "erişim yetkiniz",
        "सक्षम नहीं",
        "لا يملك صلاحية",
        "haipatikani",
        "调用权限",
        "調用權限",
        "使用权限",
        "使用權限",
    ];
    if permission_denied(message).is_some() {
        if let Some(model) = first(message, THE_MODEL) {
            return Some(format!("concept permission to \"{model}\""));
        }
        // "This API key does not have permission to use model gpt-image-1": a model named by
        // its id.
        if let (Some(_), Some(id)) = (first(message, MODEL), model_id_in(message)) {
            return Some(format!("concept permission to model \"{id}\""));
        }
    }
    // "This model is restricted to 3 requests per minute" is a rate.
    if rate_window(message) {
        return None;
    }
    named_pair(message, MODEL, DENIED, "model kept").or_else(|| {
        // "您无权访问 glm-4-plus": the model named by its id.
        let id = model_id_in(message)?;
        let denied = first(message, DENIED)?;
        Some(format!("concept model kept \"{id}\" + \"{denied}\""))
    })
}

/// Word families of codes nobody listed (`FreeUsageLimitError`, `BudgetExceeded`,
/// `model_capacity_reached`), in the order whose mistakes cost least. Codes are compared with
/// their separators removed.
const CODE_FAMILIES: &[(&[&str], ErrorClass)] = &[
    (
        &[
            "quota",
            "credit",
            "balance",
            "billing",
            "budget",
            "payment",
            "usagelimit",
            "arrear",
            "charge",
            "spendlimit",
            // `spending_limit_reached`.
            "spendinglimit",
            "fund",
            "trial",
            "daily",
            "weekly",
            "monthly",
            // `subscription_required`, `NO_ACTIVE_PLAN`, `plan_limit_reached`, `TOKENS_EXHAUSTED`
            // (not every "exhausted": `capacity_exhausted` is the provider's).
            "subscription",
            "activeplan",
            "planlimit",
            "allowance",
            "tokensexhausted",
            "tokenexhausted",
            // A prepaid pack; a subscription in pt, es, fr and de.
            "prepaid",
            "tokenpack",
            "assinatura",
            "suscripcion",
            "abonnement",
            "licenseexpired",
            "licenceexpired",
            // `plan_expired`, `PLANO_EXPIRADO`.
            "planexpired",
            "planoexpirado",
        ],
        ErrorClass::QuotaExhausted,
    ),
    (
        &[
            "contextlength",
            "contextwindow",
            "toomanytokens",
            "promptlength",
            // Baidu Qianfan `characters_too_long`.
            "toolong",
            "contexttoolarge",
            "contextoverflow",
            "contextexceeded",
            "prompttoolarge",
            "inputtoolarge",
        ],
        ErrorClass::ContextOverflow,
    ),
    (
        &[
            "modelnotfound",
            "nosuchmodel",
            "unknownmodel",
            "modelnotexist",
            "modelunavailable",
            "invalidmodel",
            // Bought or opened for the account first (DashScope `AccessDenied.Unpurchased`,
            // `CommodityNotPurchased`), an endpoint closed (Volcengine `ClosedEndpoint`).
            "unpurchased",
            "notpurchased",
            "closedendpoint",
            // Still starting (`ENDPOINT_NOT_READY`, `ModelNotReady`).
            "notready",
            // Kept from this caller: `model_access_not_granted`, `model_not_permitted_for_org`,
            // `model_not_in_group`, `model_suspended`, `model_requires_enterprise`.
            "modelaccess",
            "modelnot",
            "modelsuspended",
            "modelrequires",
            "modelrestricted",
        ],
        ErrorClass::ModelUnavailable,
    ),
    (
        &[
            "contentpolicy",
            "contentfilter",
            "moderation",
            "safety",
            "unsafe",
            // Volcengine/BytePlus `SensitiveContentDetected.*`, `InputTextRiskDetection`.
            "sensitive",
            "riskdetection",
            // Azure's `ResponsibleAIPolicyViolation`, a `ContentRisk` code.
            "responsibleai",
            "contentrisk",
            "policyviolation",
            // `guardrail_blocked`, `policy_block`, `content_review_failed`; not a guardrail
            // provider's own failure (`guardrail_error`).
            "guardrailblock",
            "guardrailintervene",
            "guardrailviolat",
            "policyblock",
            "contentreview",
            // `pii_detected`, `voice_likeness_violation`, `copyright_infringement`.
            "piidetect",
            "likeness",
            "infring",
        ],
        ErrorClass::ContentPolicy,
    ),
    (
        &[
            "ratelimit",
            "throttl",
            "toomanyrequests",
            "concurrency",
            "qps",
            "qpm",
            "rpm",
            "tpm",
            "tooquickly",
            "toofast",
            // `TOO_FREQUENT`, `request_too_frequent`.
            "frequent",
            "slowdown",
            // DashScope's `limit_requests` ("You exceeded your current requests list").
            "limitrequests",
        ],
        ErrorClass::RateLimited,
    ),
    // A time that ran out is more specific than what it waited for (`queue_wait_timeout`).
    (&["timeout", "timedout", "deadline"], ErrorClass::Timeout),
    (
        &[
            "overload",
            "capacity",
            "busy",
            "queue",
            "sobrecarg",
            "uberlast",
        ],
        ErrorClass::Overloaded,
    ),
    (
        &[
            "unauthorized",
            "unauthorised",
            "notauthorised",
            "unauthenticated",
            "authentication",
            "apikey",
            "permissiondenied",
            "accessdenied",
            "forbidden",
            "noauth",
            // Signed requests: `SignatureDoesNotMatch`, `InvalidAccessKeyId.NotFound`.
            "signature",
            "accesskey",
            // `expired_user_key`, `KeyExpired`, `token_expired`, `IpNotAllowed`.
            "userkey",
            "keyexpired",
            "expiredkey",
            "tokenexpired",
            "expiredtoken",
            "ipnotallowed",
            // `AUTH_FAILED`, `referrer_blocked` (a key kept to its web origins).
            "authfail",
            "virtualkey",
            "referer",
            "referrer",
        ],
        ErrorClass::Auth,
    ),
    // Last: a code that calls a part of the request invalid (`invalid_image`,
    // `InvalidParameterValue`); not any "invalid" (`invalid_iam_token` is a credential,
    // `invalid_prompt` OpenAI's refusal).
    (
        &[
            "invalidimage",
            "invalidfile",
            "invalidurl",
            "invalidparam",
            "invalidvalue",
            "invalidargument",
            "invalidjson",
            "invalidformat",
            "malformed",
        ],
        ErrorClass::BadRequest,
    ),
];

/// HTTP reason phrases as codes (`TooManyRequests`, `service_unavailable`): no more than the
/// status says.
const STATUS_NAMES: &[&str] = &[
    "badrequest",
    "unauthorized",
    "paymentrequired",
    "forbidden",
    "notfound",
    "requesttimeout",
    "toomanyrequests",
    "internalservererror",
    "badgateway",
    "serviceunavailable",
    "gatewaytimeout",
];

/// A code's letters and digits, lowercased (`Too_Many-Requests` -> `toomanyrequests`).
fn squashed(code: &str) -> String {
    code.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Whether a code only spells an HTTP status's name (`too_many_requests_error` too).
pub fn is_status_name(code: &str) -> bool {
    let squashed = squashed(code);
    let name = ["error", "exception"]
        .iter()
        .find_map(|suffix| squashed.strip_suffix(suffix))
        .unwrap_or(&squashed);
    STATUS_NAMES.contains(&name)
}

/// A code that names the model with a refusal of it (`model_access_denied`,
/// `ModelNotSupported`, `model_disabled`): the model is not there for this caller, another
/// serves; read before the words alone, where "accessdenied" would be a bad key.
const MODEL_REFUSED: &[&str] = &[
    "loadfailed",
    "loaderror",
    "accessdenied",
    "noaccess",
    "notallowed",
    "notallowlisted",
    "notpermitted",
    "forbidden",
    "permissiondenied",
    "unauthorized",
    "notsupported",
    "unsupported",
    "notavailable",
    "unavailable",
    "notenabled",
    "disabled",
    "deprecated",
    "decommissioned",
    "retired",
    // A preview's time ran out (`model_expired`).
    "expired",
    "offline",
    // `model_loading`, `ModelLoading`.
    "loading",
];

/// Whether a message states a short window (per minute, per second, a wait of seconds).
pub fn short_window_in(messages: &[String]) -> bool {
    messages
        .iter()
        .any(|m| short_window(m) || timed_window_in(m))
}

/// A window of seconds or minutes stated with its number: "per 10 seconds", "per 60s", "a
/// 60-second window", "1 minute window", "interval 1 minute".
pub fn timed_window_in(message: &str) -> bool {
    const UNITS: &[&str] = &[
        "seconds", "second", "secs", "sec", "s", "minutes", "minute", "mins", "min", "m",
    ];
    fn unit_after(rest: &str) -> Option<&str> {
        let rest = rest.trim_start_matches([' ', '-']);
        UNITS.iter().find_map(|u| {
            let after = rest.strip_prefix(u)?;
            (!after.starts_with(|c: char| c.is_ascii_alphanumeric())).then_some(after)
        })
    }
    if !(message.contains("per ") || message.contains("window") || message.contains("interval ")) {
        return false;
    }
    message
        .match_indices(|c: char| c.is_ascii_digit())
        .any(|(i, _)| {
            let bytes = message.as_bytes();
            // The first digit of a number only.
            if i > 0 && bytes.get(i - 1).is_some_and(u8::is_ascii_digit) {
                return false;
            }
            let digits = message
                .get(i..)
                .unwrap_or_default()
                .trim_start_matches(|c: char| c.is_ascii_digit());
            let Some(after) = unit_after(digits) else {
                return false;
            };
            let before = message.get(..i).unwrap_or_default();
            // Apigee's quota: "exceeded for interval 1 minute".
            before.ends_with("per ")
                || before.ends_with("interval ")
                || after.trim_start_matches([' ', '-']).starts_with("window")
        })
}

/// Whether a message states a limit per minute or second (the window itself, not a wait).
pub fn per_minute_limit_in(messages: &[String]) -> bool {
    let window = |w: &&str| !w.contains("again") && !w.contains("retry");
    messages.iter().any(|m| {
        candidates(m, SHORT_WINDOW)
            .chain(candidates(m, SHORT_WINDOW_ELSEWHERE))
            .filter(|w| has_phrase(m, w))
            .any(|w| window(&w))
    })
}

/// Whether a code names a window of a minute or a second (`rpm_quota`, `tpm_limit_exceeded`,
/// `QpsLimit`): a rate, whatever else its words say.
pub fn code_names_short_window(code: &str) -> bool {
    let squashed = squashed(code);
    SHORT_WINDOW_CODES.iter().any(|w| squashed.contains(w))
}

/// The words of [`code_names_short_window`].
const SHORT_WINDOW_CODES: &[&str] = &["rpm", "tpm", "qps", "perminute", "persecond"];

/// The family of a code nobody listed, if its words show one. A quota word yields when a
/// message states a short window (`request_quota_exceeded` with "requests per minute").
pub fn code_class(code: &str, short_window: bool) -> Option<(ErrorClass, &'static str)> {
    if code.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let squashed: String = code.chars().filter(char::is_ascii_alphanumeric).collect();
    // Most of the words are not in a code of a few bytes: its pairs rule them out first.
    let pairs = Pairs::of(squashed.as_bytes());
    let contains = |w: &str| pairs.may_hold(w.as_bytes()) && squashed.contains(w);
    let names_model = contains("model");
    // `InvalidContentFilterPolicy`: a setting of the request that is wrong, not a refusal; nor
    // is a field named for safety heading a message (`safetySettings: duplicate category`).
    let invalid_setting = squashed.starts_with("invalid") || contains("settings");
    // Words that hold a quota word but are not one: French `service_surcharge` (overload),
    // Azure's `InvalidSubscriptionKey` (an API key). A quota of a short window (`rpm_quota`) is
    // waited out (below).
    const NOT_QUOTA: &[(&str, ErrorClass)] = &[
        ("surcharg", ErrorClass::Overloaded),
        ("subscriptionkey", ErrorClass::Auth),
    ];
    if let Some((w, class)) = NOT_QUOTA.iter().find(|(w, _)| contains(w)) {
        return Some((*class, *w));
    }
    if let Some(w) = SHORT_WINDOW_CODES.iter().find(|w| contains(w)) {
        return Some((ErrorClass::RateLimited, *w));
    }
    let families = CODE_FAMILIES
        .iter()
        .filter(|(_, class)| !(short_window && *class == ErrorClass::QuotaExhausted));
    families.into_iter().find_map(|(words, class)| {
        if invalid_setting && *class == ErrorClass::ContentPolicy {
            return None;
        }
        let refused = || {
            let model_family = names_model && *class == ErrorClass::ModelUnavailable;
            model_family
                .then(|| MODEL_REFUSED.iter().find(|w| contains(w)))
                .flatten()
        };
        words
            .iter()
            .find(|w| contains(w))
            .or_else(refused)
            .map(|w| (*class, *w))
    })
}

/// None of them left.
const ABSENT: &[&str] = &[
    "no more",
    "no available",
    "no healthy",
    "none available",
    "not enough",
];

/// What serves requests.
const POOL: &[&str] = &[
    "servers",
    "server",
    "instances",
    "workers",
    "nodes",
    "replicas",
    "backends",
    "gpus",
    "data centers",
    "datacenters",
    "resources",
    // "no healthy upstream" in a relay's words.
    "upstream",
    "upstreams",
];

/// A capacity word ("no capacity for this model right now", "サーバーが混雑しています"), or no
/// serving resources left ("No more data centers to forward the request to").
pub fn capacity(message: &str) -> Option<String> {
    // A token bucket's capacity is the caller's rate limit ("Token bucket empty (capacity 40000
    // tokens, refill 40000/min)").
    if has_phrase(message, "bucket") {
        return None;
    }
    // "busy: you already have 2 jobs running; your plan allows 2 at a time": the caller's own
    // work in flight, which finishing frees.
    if has_phrase(message, "you already have") && first(message, CONCURRENT).is_some() {
        return None;
    }
    // "You have exhausted your capacity on this model" (Gemini Code Assist): the caller's own
    // allotment, not the provider's load, unless a load word says so too.
    if has_phrase(message, "your capacity")
        && !CAPACITY
            .iter()
            .any(|w| *w != "capacity" && has_phrase(message, w))
    {
        return None;
    }
    // "has used all of its capacity unit hours (CUH) for this billing period" (watsonx): a
    // billing unit, counted against a plan.
    if has_phrase(message, "capacity unit") || has_phrase(message, "capacity units") {
        return None;
    }
    // Or unavailable for now ("上游服务暂时不可用"): the provider's load, not a model gone.
    if let Some(w) = first(message, CAPACITY).or_else(|| first(message, FOR_NOW)) {
        return Some(format!("concept capacity \"{w}\""));
    }
    pool_absent(message)
}

/// None of what serves requests left ("No more data centers to forward the request to", "no
/// healthy upstream").
fn pool_absent(message: &str) -> Option<String> {
    named_pair(message, ABSENT, POOL, "capacity")
}

/// The provider's load named in words stronger than a bare "capacity" (which a caller's
/// provisioned capacity also has): overloaded, busy, high demand, or its servers or capacity
/// short ([`provider_short_in`]).
pub fn load_in(messages: &[String]) -> Option<String> {
    messages
        .iter()
        .find_map(|m| {
            first(m, CAPACITY)
                .filter(|w| *w != "capacity")
                .map(|w| format!("concept capacity \"{w}\""))
        })
        .or_else(|| provider_short_in(messages))
}

/// The provider's own capacity named as what ran short: none of its servers left ("No workers
/// available: all GPU workers ... are throttled") or its capacity ("throttled due to system
/// capacity limits").
pub fn provider_short_in(messages: &[String]) -> Option<String> {
    const PROVIDER_CAPACITY: &[&str] = &[
        "system capacity",
        "server capacity",
        "service capacity",
        "cluster capacity",
        "platform capacity",
    ];
    messages.iter().find_map(|m| {
        first(m, PROVIDER_CAPACITY)
            .map(|w| format!("concept capacity \"{w}\""))
            .or_else(|| pool_absent(m))
    })
}

/// A quota stop in any message (checked before codes: a quota stop read as anything retryable
/// wastes attempts on a model that cannot answer, the costliest mistake).
pub fn quota_in(messages: &[String]) -> Option<String> {
    messages.iter().find_map(|m| quota(m))
}

/// The first of the other classes the messages show: a model that is not there, a prompt too
/// large, a refusal.
pub fn class_of(messages: &[String]) -> Option<(ErrorClass, String)> {
    type Reader = fn(&str) -> Option<String>;
    const ORDER: [(Reader, ErrorClass); 11] = [
        (model_missing, ErrorClass::ModelUnavailable),
        (too_large, ErrorClass::ContextOverflow),
        (output_bound_exceeded, ErrorClass::ContextOverflow),
        (time_limit_hit, ErrorClass::Timeout),
        (refusal, ErrorClass::ContentPolicy),
        (credential_rejected, ErrorClass::Auth),
        (account_blocked, ErrorClass::Auth),
        (address_refused, ErrorClass::Auth),
        (model_permission_denied, ErrorClass::ModelUnavailable),
        (permission_denied, ErrorClass::Auth),
        (bad_field, ErrorClass::BadRequest),
    ];
    ORDER
        .iter()
        .find_map(|(read, class)| messages.iter().find_map(|m| read(m)).map(|r| (*class, r)))
}

/// A time limit run out, told by its length ("did not return within 30s", "exceeded its 120s
/// deadline", "did not finish within its 25-second execution limit", "hit its 10-minute wall
/// clock"): a duration beside a word of a limit. Not a window of requests ("60 requests within
/// 60 seconds"), nor a wait ("try again in 30s").
fn time_limit_hit(message: &str) -> Option<String> {
    const LIMIT: &[&str] = &[
        "deadline",
        "within",
        "time limit",
        "execution limit",
        "hard limit",
        "wall clock",
        "wall-clock",
    ];
    const COUNTED: &[&str] = &[
        "requests",
        "calls",
        "tokens",
        "messages",
        "retry",
        "try again",
        "wait",
        "per",
    ];
    const UNITS: &[&str] = &[
        "ms", "s", "sec", "secs", "second", "seconds", "min", "mins", "minute", "minutes",
    ];
    // The digits first: most messages hold no duration.
    if !message.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    let limit = first(message, LIMIT)?;
    let lasted = message
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.'))
        .map(|w| w.trim_end_matches('.'))
        .find(|w| {
            let unit = w.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
            let unit = unit.strip_prefix('-').unwrap_or(unit);
            unit.len() < w.len()
                && w.starts_with(|c: char| c.is_ascii_digit())
                && UNITS.contains(&unit)
        })?;
    if first(message, COUNTED).is_some() || rate_window(message) || short_window(message) {
        return None;
    }
    Some(format!("concept a time limit \"{limit}\" of {lasted}"))
}

/// Words of a request the server would not take as sent ("must be an odd number",
/// "Unsupported openapi method", "参数错误"): what a 400 says. Read only where the status says
/// nothing (an error envelope inside a 200).
const REQUEST_FAULT: &[&str] = &[
    "invalid",
    // "safetySettings: duplicate category HARM_CATEGORY_HARASSMENT".
    "duplicate",
    "unrecognized",
    "unknown name",
    "unknown field",
    "unsupported",
    "not supported",
    "must be",
    "must not",
    "is required",
    "are required",
    // "voice id not exist" (MiniMax 2054): something the request names that is not there (a
    // model named is read before, as the model's).
    "not exist",
    "does not exist",
    "missing",
    "malformed",
    "illegal",
    "cannot be empty",
    "can not be empty",
    "out of range",
    // "content和tool_calls 字段不能同时为空" (Zhipu 1214): fields that cannot (both) be empty.
    "不能为空",
    "不能同时为空",
    "不可为空",
    "参数",
    "參數",
    "不支持",
    "不支援",
    "无效",
    "無效",
    "非法",
    "格式错误",
    "格式錯誤",
    "必须",
    "必須",
    "缺少",
    "パラメータ",
    "無効",
    "잘못된",
    "유효하지",
    // Invalid in de, fr, es, pt, it, nl, pl, tr, cs, sv: "Ungültiger Wert für 'timeout'".
    "ungültig",
    "ungültiger",
    "ungültige",
    "invalide",
    "inválido",
    "inválida",
    "non valido",
    "non valida",
    "ongeldig",
    "ongeldige",
    "nieprawidłow",
    "geçersiz",
    "neplatn",
    "ogiltig",
    // Unknown, unsupported, required or wrong in es, pt, fr, de, it, ru, vi, id, th, ar, ko, nl, pl, tr.
    "desconocido",
    "desconocida",
    "no reconocido",
    "não suportado",
    "não suportada",
    "no soportado",
    "non supporté",
    "non pris en charge",
    "doit être",
    "nicht unterstützt",
    "unbekannt",
    "unbekannter",
    "non supportato",
    "sconosciuto",
    "obbligatorio",
    "некорректн",
    "неверн",
    "не поддерживается",
    "không hợp lệ",
    "tidak valid",
    "tidak didukung",
    "wajib",
    "ไม่ถูกต้อง",
    "غير صحيح",
    "غير صالح",
    "غير مدعوم",
    "지원하지 않",
    "onbekend",
    "onbekende",
    "niet ondersteund",
    "nieznany",
    "nieobsługiwan",
    "desteklenmiyor",
    "bilinmeyen",
    // Required, missing or not supported in ja, vi, sv, de, fr, es, pt, nl, pl, cs, ru, uk,
    // tr, ko, ar, hi, el, he, ro ("Pflichtfeld fehlt: messages", "Obligatoriskt fält saknas",
    // "Định dạng tệp không được hỗ trợ", "temperature と top_p は同時に指定できません").
    "指定できません",
    "必須",
    "サポートされていない",
    "không được hỗ trợ",
    "thiếu",
    "bắt buộc",
    "obligatorisk",
    "saknas",
    "pflichtfeld",
    "fehlt",
    "obligatoire",
    "manquant",
    "manquante",
    "obligatorio",
    "no compatible",
    "obrigatório",
    "obrigatória",
    "ausente",
    "verplicht",
    "ontbreekt",
    "wymagany",
    "wymagane",
    "wymaganego",
    "wymagana",
    "povinné",
    "povinný",
    "povinná",
    "chybí",
    "обязательн",
    "отсутствует",
    "неподдерживаем",
    "обов'язков",
    "відсутн",
    "zorunlu",
    "eksik",
    "desteklenmeyen",
    "필수",
    "누락",
    "지원되지 않",
    "مطلوب",
    "مفقود",
    "आवश्यक",
    "υποχρεωτικ",
    "λείπει",
    "חובה",
    "חסר",
    "obligatoriu",
    "lipsește",
    // A value out of its range: "harus antara 0 dan 2", "должен быть от 0 до 2".
    "harus",
    "должен",
    "debe estar",
    "debe ser",
];

/// A word of a request not taken as sent, in any message.
pub fn request_fault_in(messages: &[String]) -> Option<&'static str> {
    messages.iter().find_map(|m| {
        first(m, REQUEST_FAULT).or_else(|| names_indexed_field(m).then_some("a request field"))
    })
}

/// Whether a message starts with the request field it faults, by an indexed path before a
/// colon (`messages.2.content.4: each tool_use must have a single result`, `contents[0]: ...`).
/// The index tells a field of the request from a module or a host (`google.api_core: ...`).
fn names_indexed_field(message: &str) -> bool {
    let Some((head, _)) = message.split_once(':') else {
        return false;
    };
    let path = head.len() <= 64
        && head.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && head
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._[]".contains(&b));
    path && head
        .split(['.', '[', ']'])
        .any(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
}

/// A capacity word in any message: the weakest concept, checked after every phrase.
pub fn capacity_in(messages: &[String]) -> Option<String> {
    messages.iter().find_map(|m| capacity(m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::evidence::normalize;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn class(message: &str) -> Option<ErrorClass> {
        let messages = [normalize(message)];
        if quota_in(&messages).is_some() {
            return Some(ErrorClass::QuotaExhausted);
        }
        class_of(&messages)
            .map(|(c, _)| c)
            .or_else(|| capacity_in(&messages).map(|_| ErrorClass::Overloaded))
    }

    /// `GRANT` and `ALLOWANCE` list the same quota words in each language; a word added to one
    /// and forgotten in the other drifts them apart. Only these grants are no caller's allowance
    /// word: balances and plans' counts the allowance reader meets through other lists.
    #[wasm_bindgen_test(unsupported = test)]
    fn every_grant_word_is_an_allowance() {
        let grants_only = ["credits", "premium request", "premium requests"];
        let drifted: Vec<&str> = GRANT
            .iter()
            .copied()
            .filter(|w| first(w, ALLOWANCE).is_some() == grants_only.contains(w))
            .collect();
        assert!(drifted.is_empty(), "{drifted:?}");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn wordings_no_list_holds_are_read_by_their_concepts() {
        let cases = [
            (
                "Your prepaid funds are depleted.",
                ErrorClass::QuotaExhausted,
            ),
            ("账户余额不足，请充值", ErrorClass::QuotaExhausted),
            ("帳戶餘額不足", ErrorClass::QuotaExhausted),
            ("クレジット残高が不足しています", ErrorClass::QuotaExhausted),
            ("잔액이 부족합니다", ErrorClass::QuotaExhausted),
            ("您的套餐已到期", ErrorClass::QuotaExhausted),
            (
                "The model foo-9 does not exist.",
                ErrorClass::ModelUnavailable,
            ),
            ("モデルが見つかりません", ErrorClass::ModelUnavailable),
            ("모델을 찾을 수 없습니다", ErrorClass::ModelUnavailable),
            ("model fade out", ErrorClass::ModelUnavailable),
            (
                "Input length exceeds the maximum allowed",
                ErrorClass::ContextOverflow,
            ),
            ("上下文超出上限", ErrorClass::ContextOverflow),
            (
                "The input was flagged by our moderation system",
                ErrorClass::ContentPolicy,
            ),
            ("输入内容违规", ErrorClass::ContentPolicy),
            (
                "blocked: prompt: BlockedReasonProhibitedContent",
                ErrorClass::ContentPolicy,
            ),
            (
                "No more data centers to forward the request to",
                ErrorClass::Overloaded,
            ),
            ("サーバーが混雑しています", ErrorClass::Overloaded),
        ];
        for (message, want) in cases {
            assert_eq!(class(message), Some(want), "{message}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn words_of_a_concept_must_share_a_clause_and_yield_to_what_outweighs_them() {
        let cases = [
            // A billing pointer at the end of a rate limit.
            "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000. Visit https://platform.openai.com/account/rate-limits to learn more, or check your plan and billing details.",
            // A wait helps.
            "Too many tokens, please wait before trying again.",
            "Number of request tokens has exceeded your per-minute rate limit",
            // Permissions, not a missing model.
            "Permission denied on resource project x (or it may not exist).",
            // Not money.
            "upstream load balancer exceeded its timeout",
            // A parameter named after the model, not a missing model.
            "Unknown parameter: 'model_config'.",
        ];
        for message in cases {
            let got = class(message);
            assert!(
                !matches!(
                    got,
                    Some(
                        ErrorClass::QuotaExhausted
                            | ErrorClass::ContextOverflow
                            | ErrorClass::ModelUnavailable
                    )
                ),
                "{message}: {got:?}"
            );
        }
    }
}
