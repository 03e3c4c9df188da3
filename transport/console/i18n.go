package console

import (
	"fmt"
	"html/template"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payd-engine/payd/engine"
)

// The console's languages, as the hosted checkout's.
const (
	langEnglish = "en"
	langBangla  = "bn"
)

// texts are the console's words: key -> {English, Bangla}.
var texts = map[string][2]string{
	"lang_name":            {"English", "বাংলা"},
	"brand":                {"payd console", "payd কনসোল"},
	"t_login":              {"Log in", "লগ ইন"},
	"t_setup":              {"Set your password", "পাসওয়ার্ড ঠিক করুন"},
	"t_overview":           {"Overview", "সারসংক্ষেপ"},
	"t_deposits":           {"Deposits", "জমা"},
	"t_deposit":            {"Deposit", "জমা"},
	"t_withdrawals":        {"Withdrawals", "উত্তোলন"},
	"t_sms":                {"SMS inbox", "এসএমএস ইনবক্স"},
	"t_devices":            {"Devices", "ডিভাইস"},
	"t_wallets":            {"Wallets", "ওয়ালেট"},
	"t_webhooks":           {"Webhooks", "ওয়েবহুক"},
	"t_keys":               {"API keys", "এপিআই কী"},
	"t_audit":              {"Audit log", "অডিট লগ"},
	"t_links":              {"Payment links", "পেমেন্ট লিংক"},
	"t_pay":                {"Pay", "পরিশোধ"},
	"t_error":              {"Something went wrong", "সমস্যা হয়েছে"},
	"email":                {"Email", "ইমেইল"},
	"password":             {"Password", "পাসওয়ার্ড"},
	"password_again":       {"Password again", "আবার পাসওয়ার্ড"},
	"code":                 {"Code from your authenticator app (if turned on)", "অথেনটিকেটর অ্যাপের কোড (চালু থাকলে)"},
	"login":                {"Log in", "লগ ইন"},
	"logout":               {"Log out", "লগ আউট"},
	"login_refused":        {"Wrong email, password or code, or the account is locked for a while.", "ইমেইল, পাসওয়ার্ড বা কোড ভুল, অথবা অ্যাকাউন্ট কিছুক্ষণের জন্য বন্ধ।"},
	"login_throttled":      {"Too many tries. Wait a minute.", "অনেকবার চেষ্টা হয়েছে। এক মিনিট অপেক্ষা করুন।"},
	"login_busy":           {"Too many logins at once. Try again in a few seconds.", "একসাথে অনেক লগইন চলছে। কয়েক সেকেন্ড পরে আবার চেষ্টা করুন।"},
	"logged_out":           {"You are logged out.", "আপনি লগ আউট হয়েছেন।"},
	"setup_done":           {"Your password is set. Log in.", "পাসওয়ার্ড ঠিক হয়েছে। লগ ইন করুন।"},
	"setup_for":            {"Account: %s", "অ্যাকাউন্ট: %s"},
	"pw_short":             {"The password must be at least 12 characters.", "পাসওয়ার্ড কমপক্ষে ১২ অক্ষরের হতে হবে।"},
	"pw_long":              {"The password is too long.", "পাসওয়ার্ড অনেক লম্বা।"},
	"pw_mismatch":          {"The two passwords differ.", "দুটি পাসওয়ার্ড মেলেনি।"},
	"totp_wrong":           {"That code is not right for this secret. Check the app's clock.", "এই কোডটি মেলেনি। অ্যাপের সময় দেখুন।"},
	"totp_optional":        {"Two-factor login (recommended): add this secret to an authenticator app, then enter its code. Leave the code empty to skip.", "দুই-ধাপ লগইন (প্রস্তাবিত): এই সিক্রেট অথেনটিকেটর অ্যাপে যোগ করে কোড দিন। বাদ দিতে কোড খালি রাখুন।"},
	"save":                 {"Save", "সংরক্ষণ"},
	"search":               {"Search", "খুঁজুন"},
	"err_not_found":        {"Not found.", "পাওয়া যায়নি।"},
	"err_forbidden":        {"You may not do that.", "এটি করার অনুমতি নেই।"},
	"err_internal":         {"Internal error. Try again; if it stays, tell the administrator.", "অভ্যন্তরীণ ত্রুটি। আবার চেষ্টা করুন।"},
	"err_unavailable":      {"The database is unavailable for a moment. Try again in a few seconds.", "ডাটাবেস কিছুক্ষণের জন্য পাওয়া যাচ্ছে না। কয়েক সেকেন্ড পরে আবার চেষ্টা করুন।"},
	"back":                 {"Back to the overview", "সারসংক্ষেপে ফিরুন"},
	"organization":         {"Organization", "প্রতিষ্ঠান"},
	"switch":               {"Show", "দেখান"},
	"available":            {"Available", "ব্যবহারযোগ্য"},
	"held":                 {"Held", "আটকানো"},
	"today":                {"Today", "আজ"},
	"none":                 {"None", "কিছু নেই"},
	"queues":               {"Queues", "অপেক্ষমাণ কাজ"},
	"q_verifications":      {"Verifications waiting", "যাচাইয়ের অপেক্ষায়"},
	"q_delayed":            {"Verifications delayed", "যাচাই বিলম্বিত"},
	"q_payouts":            {"Payouts processing", "পেআউট চলমান"},
	"q_deliveries":         {"Webhook deliveries pending", "ওয়েবহুক অপেক্ষমাণ"},
	"payouts_waiting":      {"Payouts waiting for an operator", "অপারেটরের অপেক্ষায় পেআউট"},
	"held_sms":             {"Held or conflicting SMS", "আটকানো বা বিরোধপূর্ণ এসএমএস"},
	"silent_devices":       {"Silent devices", "নীরব ডিভাইস"},
	"merchant_id":          {"Merchant ID", "মার্চেন্ট আইডি"},
	"transaction_id":       {"Transaction ID", "ট্রানজেকশন আইডি"},
	"payer_phone":          {"Payer phone", "প্রেরকের ফোন"},
	"status":               {"Status", "অবস্থা"},
	"any":                  {"Any", "যেকোনো"},
	"from":                 {"From", "থেকে"},
	"to":                   {"To", "পর্যন্ত"},
	"amount":               {"Amount", "পরিমাণ"},
	"method":               {"Method", "মাধ্যম"},
	"created":              {"Created", "তৈরি"},
	"no_results":           {"Nothing found.", "কিছু পাওয়া যায়নি।"},
	"attempts":             {"Verification attempts", "যাচাই প্রচেষ্টা"},
	"failure":              {"Failure", "ব্যর্থতা"},
	"events":               {"Events and deliveries", "ইভেন্ট ও ডেলিভারি"},
	"redeliver":            {"Send again", "আবার পাঠান"},
	"account":              {"Account", "অ্যাকাউন্ট"},
	"payout_queue":         {"Manual payout queue", "ম্যানুয়াল পেআউট সারি"},
	"t_refund":             {"Refund", "রিফান্ড"},
	"refunds":              {"Refunds", "রিফান্ড"},
	"refund_left":          {"Left to refund", "ফেরতযোগ্য বাকি"},
	"refund_review":        {"Review the refund", "রিফান্ড দেখুন"},
	"refund_confirm_hint":  {"The payer gets this amount back; it is held from the available balance now.", "গ্রাহক এই টাকা ফেরত পাবেন; এখনই উপলব্ধ ব্যালান্স থেকে আটকানো হবে।"},
	"refund_confirm":       {"Confirm the refund", "রিফান্ড নিশ্চিত করুন"},
	"refund_amount_hint":   {"empty: all that is left", "খালি: বাকি সবটা"},
	"done_refund":          {"The refund is created; it completes when the money is sent.", "রিফান্ড তৈরি হয়েছে; টাকা পাঠানো হলে সম্পন্ন হবে।"},
	"refund_of":            {"refund of", "রিফান্ড:"},
	"payout_hint":          {"Send the money from your wallet, then record its transaction ID here.", "আপনার ওয়ালেট থেকে টাকা পাঠিয়ে এখানে ট্রানজেকশন আইডি লিখুন।"},
	"complete":             {"Mark sent", "পাঠানো হয়েছে"},
	"confirm":              {"Confirm (an SMS matched it)", "নিশ্চিত করুন (এসএমএস মিলেছে)"},
	"fail":                 {"Fail", "ব্যর্থ"},
	"reason":               {"Reason", "কারণ"},
	"approve":              {"Approve", "অনুমোদন"},
	"reject":               {"Reject", "বাতিল"},
	"sender":               {"Sender", "প্রেরক"},
	"text":                 {"Text", "লেখা"},
	"received_at":          {"Received at (Dhaka time, optional)", "প্রাপ্তির সময় (ঐচ্ছিক)"},
	"paste":                {"Paste an SMS the phone missed", "ফোনে না আসা এসএমএস যোগ করুন"},
	"paste_do":             {"Add the SMS", "এসএমএস যোগ করুন"},
	"anchor":               {"Re-anchor a wallet's balance", "ওয়ালেটের ব্যালান্স পুনঃনির্ধারণ"},
	"anchor_hint":          {"The balance the wallet's phone shows now.", "ফোনে এখন যে ব্যালান্স দেখাচ্ছে।"},
	"anchor_do":            {"Set balance", "ব্যালান্স ঠিক করুন"},
	"balance":              {"Balance", "ব্যালান্স"},
	"chain_balance":        {"balance payd knows", "payd-এর জানা ব্যালান্স"},
	"anchored":             {"balance anchored", "ব্যালান্স নির্ধারিত"},
	"not_anchored":         {"no balance yet: the owner anchors it", "এখনো ব্যালান্স নেই: মালিক নির্ধারণ করবেন"},
	"wallet":               {"Wallet", "ওয়ালেট"},
	"messages":             {"Messages", "বার্তা"},
	"whats_wrong":          {"What is wrong", "সমস্যা"},
	"matched":              {"Matched to", "মিলেছে"},
	"unmatched":            {"Proven payments that credited no deposit", "যে প্রমাণিত পেমেন্ট কোনো জমায় যায়নি"},
	"credit":               {"Credit the deposit", "জমায় যোগ করুন"},
	"device":               {"Device", "ডিভাইস"},
	"last_report":          {"Last report", "শেষ রিপোর্ট"},
	"never":                {"never", "কখনো না"},
	"silent":               {"silent", "নীরব"},
	"revoked":              {"revoked", "বাতিল"},
	"revoke":               {"Revoke", "বাতিল করুন"},
	"rotate":               {"New token", "নতুন টোকেন"},
	"rotate_key":           {"Rotate", "নতুন কী"},
	"token_once":           {"The device's new token, shown once: put it in the forwarder app now.", "ডিভাইসের নতুন টোকেন, একবারই দেখানো হবে।"},
	"phone":                {"Phone", "ফোন"},
	"channel":              {"Channel", "চ্যানেল"},
	"enabled":              {"Enabled", "চালু"},
	"disabled":             {"Disabled", "বন্ধ"},
	"enable":               {"Enable", "চালু করুন"},
	"disable":              {"Disable", "বন্ধ করুন"},
	"limits":               {"Limits", "সীমা"},
	"endpoints":            {"Endpoints", "এন্ডপয়েন্ট"},
	"url":                  {"URL", "ইউআরএল"},
	"key":                  {"Key", "কী"},
	"expires":              {"Stops working", "মেয়াদ শেষ"},
	"key_once":             {"The new key and signing secret, shown once: store them now. The old key works for 24 hours more.", "নতুন কী ও সিক্রেট, একবারই দেখানো হবে। পুরনো কী আরও ২৪ ঘণ্টা চলবে।"},
	"signing_secret":       {"Signing secret", "সাইনিং সিক্রেট"},
	"actor":                {"Who", "কে"},
	"action":               {"Action", "কাজ"},
	"subject":              {"Subject", "বিষয়"},
	"details":              {"Details", "বিস্তারিত"},
	"when":                 {"When", "কখন"},
	"note":                 {"Note for the payer", "প্রেরকের জন্য নোট"},
	"link_create":          {"Create link", "লিংক তৈরি করুন"},
	"link_created":         {"Send this link to the payer:", "এই লিংকটি প্রেরককে পাঠান:"},
	"link":                 {"Link", "লিংক"},
	"paid":                 {"Paid", "পরিশোধিত"},
	"open":                 {"Open", "খোলা"},
	"pay_to":               {"Payment to %s", "%s-কে পরিশোধ"},
	"pay_with":             {"Pay with %s", "%s দিয়ে পরিশোধ"},
	"pay_done":             {"This link is paid. Thank you.", "এই লিংকটি পরিশোধিত। ধন্যবাদ।"},
	"compat_key":           {"UddoktaPay-compatible API key (for UddoktaPay plugins)", "UddoktaPay-সামঞ্জস্যপূর্ণ API কী (UddoktaPay প্লাগইনের জন্য)"},
	"compat_once":          {"The new key, shown once: enter it in the plugin now. Any previous one no longer works.", "নতুন কী, একবারই দেখানো হবে: এখনই প্লাগইনে বসান। আগের কী আর চলবে না।"},
	"compat_off":           {"Not enabled.", "চালু নেই।"},
	"compat_enable":        {"Issue a new key", "নতুন কী দিন"},
	"done_compat_disable":  {"The UddoktaPay-compatible key is revoked.", "UddoktaPay-সামঞ্জস্যপূর্ণ কী বাতিল।"},
	"pay_return":           {"Return to the shop", "দোকানে ফিরে যান"},
	"pay_cancel":           {"Cancel and return to the shop", "বাতিল করে দোকানে ফিরে যান"},
	"t_busy":               {"Please wait", "একটু অপেক্ষা করুন"},
	"busy":                 {"Too many requests from your connection. Please try again in %d seconds.", "আপনার সংযোগ থেকে অনেক বেশি অনুরোধ এসেছে। %d সেকেন্ড পরে আবার চেষ্টা করুন।"},
	"try_again":            {"Try again", "আবার চেষ্টা করুন"},
	"read_only":            {"You can look, not change (viewer).", "আপনি শুধু দেখতে পারেন।"},
	"done_payout_complete": {"The payout is recorded as sent.", "পেআউট পাঠানো হিসেবে লেখা হয়েছে।"},
	"done_payout_fail":     {"The payout is failed; its hold is released.", "পেআউট ব্যর্থ; আটকানো টাকা ফেরত।"},
	"done_sms_approve":     {"The SMS is approved.", "এসএমএস অনুমোদিত।"},
	"done_sms_reject":      {"The SMS is rejected.", "এসএমএস বাতিল।"},
	"done_sms_paste":       {"The SMS is added.", "এসএমএস যোগ হয়েছে।"},
	"done_sms_anchor":      {"The wallet's balance is set.", "ওয়ালেটের ব্যালান্স ঠিক হয়েছে।"},
	"done_credit":          {"The deposit is credited.", "জমায় যোগ হয়েছে।"},
	"done_device_revoke":   {"The device is revoked.", "ডিভাইস বাতিল।"},
	"done_wallet_enable":   {"The wallet is back in the pool.", "ওয়ালেট আবার চালু।"},
	"done_wallet_disable":  {"The wallet is out of the pool.", "ওয়ালেট বন্ধ।"},
	"done_wallet_limits":   {"The wallet's limits are saved.", "ওয়ালেটের সীমা সংরক্ষিত।"},
	"min_amount":           {"Smallest deposit", "সর্বনিম্ন জমা"},
	"max_amount":           {"Largest deposit", "সর্বোচ্চ জমা"},
	"daily_limit":          {"Daily total", "দৈনিক মোট"},
	"no_limit":             {"empty: no limit", "খালি: সীমা নেই"},
	"endpoints_failing":    {"Webhook endpoints failing or disabled", "ব্যর্থ বা বন্ধ ওয়েবহুক"},
	"done_redeliver":       {"The event is queued again.", "ইভেন্ট আবার পাঠানো হবে।"},
	"done_key_revoke":      {"The key is revoked.", "কী বাতিল।"},
	"logged_in_as":         {"%s (%s)", "%s (%s)"},
	"platform":             {"all organizations", "সব প্রতিষ্ঠান"},

	// Times, statuses, methods, channels, operations and failure codes.
	"zone":                      {"(Dhaka, UTC+6)", "(ঢাকা, UTC+6)"},
	"sandbox_banner":            {"Sandbox: test mode, no real money moves.", "স্যান্ডবক্স: পরীক্ষামূলক মোড, আসল টাকা লেনদেন হয় না।"},
	"fee":                       {"Fee", "ফি"},
	"fee_rates":                 {"Fee (at the organization's rates)", "ফি (প্রতিষ্ঠানের হারে)"},
	"net":                       {"Net to the organization", "প্রতিষ্ঠানের নিট"},
	"commission":                {"Commission", "কমিশন"},
	"total_held":                {"Total from the balance", "ব্যালান্স থেকে মোট"},
	"st_pending":                {"Waiting for payment", "পেমেন্টের অপেক্ষায়"},
	"st_processing":             {"Processing", "চলমান"},
	"st_succeeded":              {"Succeeded", "সফল"},
	"st_failed":                 {"Failed", "ব্যর্থ"},
	"st_cancelled":              {"Cancelled", "বাতিল"},
	"st_expired":                {"Expired", "মেয়াদোত্তীর্ণ"},
	"st_rejected":               {"Rejected", "প্রত্যাখ্যাত"},
	"st_refunded":               {"Refunded", "ফেরত দেওয়া"},
	"st_delayed":                {"Delayed", "বিলম্বিত"},
	"st_delivered":              {"Delivered", "পৌঁছেছে"},
	"st_exhausted":              {"Gave up (send again by hand)", "চেষ্টা শেষ (আবার পাঠান)"},
	"st_held":                   {"Held", "আটকানো"},
	"st_conflict":               {"Conflict", "বিরোধ"},
	"st_accepted":               {"Accepted", "গৃহীত"},
	"st_duplicate":              {"Duplicate", "প্রতিলিপি"},
	"st_unparsed":               {"Not understood", "বোঝা যায়নি"},
	"st_untrusted_sender":       {"Untrusted sender", "অবিশ্বস্ত প্রেরক"},
	"st_no_wallet":              {"No wallet", "ওয়ালেট নেই"},
	"st_queued":                 {"Waiting for an operator", "অপারেটরের অপেক্ষায়"},
	"st_matched":                {"An SMS matched it", "এসএমএস মিলেছে"},
	"m_bkash":                   {"bKash", "বিকাশ"},
	"m_nagad":                   {"Nagad", "নগদ"},
	"m_upi":                     {"UPI", "UPI"},
	"m_upay":                    {"Upay", "উপায়"},
	"m_bank":                    {"Bank transfer", "ব্যাংক ট্রান্সফার"},
	"m_bkash_agent":             {"bKash (agent cash-out)", "বিকাশ (এজেন্ট ক্যাশ আউট)"},
	"m_nagad_agent":             {"Nagad (agent cash-out)", "নগদ (এজেন্ট ক্যাশ আউট)"},
	"m_upay_agent":              {"Upay (agent cash-out)", "উপায় (এজেন্ট ক্যাশ আউট)"},
	"m_bkash_merchant":          {"bKash (merchant payment)", "বিকাশ (মার্চেন্ট পেমেন্ট)"},
	"m_nagad_merchant":          {"Nagad (merchant payment)", "নগদ (মার্চেন্ট পেমেন্ট)"},
	"m_upay_merchant":           {"Upay (merchant payment)", "উপায় (মার্চেন্ট পেমেন্ট)"},
	"m_bangla_qr_merchant":      {"Bangla QR", "বাংলা কিউআর"},
	"m_rocket":                  {"Rocket", "রকেট"},
	"ch_bkash":                  {"bKash", "বিকাশ"},
	"ch_nagad":                  {"Nagad", "নগদ"},
	"ch_upi":                    {"UPI", "UPI"},
	"ch_upay":                   {"Upay", "উপায়"},
	"ch_bank":                   {"Bank", "ব্যাংক"},
	"ch_bangla_qr":              {"Bangla QR", "বাংলা কিউআর"},
	"ch_rocket":                 {"Rocket", "রকেট"},
	"op_cash_out":               {"Cash Out", "ক্যাশ আউট"},
	"op_make_payment":           {"Make Payment", "পেমেন্ট"},
	"op_send_money":             {"Send Money", "সেন্ড মানি"},
	"m_redirect":                {"hosted checkout", "হোস্টেড চেকআউট"},
	"m_h2h":                     {"host to host", "হোস্ট-টু-হোস্ট"},
	"fc_transaction_not_found":  {"No payment has this transaction ID", "এই ট্রানজ্যাকশন আইডির কোনো পেমেন্ট নেই"},
	"fc_channel_mismatch":       {"Paid with another service or type", "অন্য সেবা বা ধরনে পরিশোধ"},
	"fc_recipient_mismatch":     {"Paid to another number", "অন্য নম্বরে পরিশোধ"},
	"fc_payer_mismatch":         {"Paid from another number", "অন্য নম্বর থেকে পরিশোধ"},
	"fc_amount_mismatch":        {"Not exactly the amount due", "পাওনা পরিমাণের সমান নয়"},
	"fc_payment_not_completed":  {"The payment was not completed", "পেমেন্ট সম্পন্ন হয়নি"},
	"fc_outside_payment_window": {"Paid outside the payment window", "সময়সীমার বাইরে পরিশোধ"},
	"fc_transaction_id_used":    {"The transaction ID was already used", "ট্রানজ্যাকশন আইডি আগেই ব্যবহৃত"},
	"fc_provider_unavailable":   {"The wallet service could not be reached", "ওয়ালেট সেবায় যোগাযোগ করা যায়নি"},

	"pay_no_method": {"This payment cannot be taken online right now. Please contact the shop.", "এই পেমেন্ট এখন অনলাইনে নেওয়া যাচ্ছে না। দোকানের সাথে যোগাযোগ করুন।"},
	"reference":     {"Reference", "রেফারেন্স"},

	"webhook_url":         {"Endpoint URL (your server's https address that receives events)", "এন্ডপয়েন্ট URL (আপনার সার্ভারের যে https ঠিকানা ইভেন্ট পাবে)"},
	"webhook_add":         {"Add endpoint", "এন্ডপয়েন্ট যোগ করুন"},
	"webhook_secret_once": {"The endpoint's signing secret, shown once: put it in your server now to check each event's signature.", "এন্ডপয়েন্টের সাইনিং সিক্রেট, একবারই দেখানো হবে: প্রতিটি ইভেন্টের স্বাক্ষর যাচাই করতে এখনই আপনার সার্ভারে রাখুন।"},
	"key_new_once":        {"The new key and signing secret, shown once: store them now.", "নতুন কী ও সিক্রেট, একবারই দেখানো হবে: এখনই রেখে দিন।"},
	"rotate_secret":       {"New signing secret", "নতুন সাইনিং সিক্রেট"},
	"secret_once":         {"The key's new signing secret, shown once: put it in your server now. The old one works for a while more.", "কী-এর নতুন সাইনিং সিক্রেট, একবারই দেখানো হবে: এখনই আপনার সার্ভারে রাখুন। পুরনোটি আরও কিছুক্ষণ চলবে।"},
	"key_create":          {"New API key", "নতুন এপিআই কী"},
	"fe_url":              {"Enter a full http(s) address your server answers at, like https://shop.example/payd/webhook.", "আপনার সার্ভারের পূর্ণ http(s) ঠিকানা লিখুন, যেমন https://shop.example/payd/webhook।"},

	"totp_scan": {"Scan this with your authenticator app, or type the secret below.", "অথেনটিকেটর অ্যাপ দিয়ে এটি স্ক্যান করুন, অথবা নিচের সিক্রেট লিখুন।"},
	"link_copy": {"Copy the link", "লিংকটি কপি করুন"},
	"link_qr":   {"The payer scans this with a phone camera.", "প্রেরক ফোনের ক্যামেরায় এটি স্ক্যান করবেন।"},

	"t_balance":             {"Balance", "ব্যালান্স"},
	"adjust":                {"Adjust the balance by hand", "হাতে ব্যালান্স সমন্বয়"},
	"adjust_direction":      {"Direction", "দিক"},
	"adjust_credit":         {"Add to the available balance", "উপলব্ধ ব্যালান্সে যোগ"},
	"adjust_debit":          {"Take from the available balance", "উপলব্ধ ব্যালান্স থেকে বাদ"},
	"adjust_hint":           {"Written to the ledger with your name and the reason; it cannot be undone, only adjusted back.", "আপনার নাম ও কারণসহ খতিয়ানে লেখা হবে; মোছা যায় না, কেবল উল্টো সমন্বয় করা যায়।"},
	"adjust_do":             {"Adjust", "সমন্বয় করুন"},
	"done_adjust":           {"The balance is adjusted.", "ব্যালান্স সমন্বয় হয়েছে।"},
	"done_adjust_again":     {"This adjustment was already made; it was not made twice.", "এই সমন্বয় আগেই হয়েছে; দুবার হয়নি।"},
	"movements":             {"Latest movements", "সাম্প্রতিক লেনদেন"},
	"balance_after":         {"balance after", "পরের ব্যালান্স"},
	"acct_available":        {"available", "উপলব্ধ"},
	"acct_held":             {"held", "আটকানো"},
	"jk_deposit_credit":     {"deposit", "জমা"},
	"jk_withdrawal_hold":    {"withdrawal held", "উত্তোলন আটকানো"},
	"jk_withdrawal_settle":  {"withdrawal sent", "উত্তোলন পাঠানো"},
	"jk_withdrawal_release": {"withdrawal released", "উত্তোলন ফেরত"},
	"jk_refund_hold":        {"refund held", "রিফান্ড আটকানো"},
	"jk_refund_settle":      {"refund sent", "রিফান্ড পাঠানো"},
	"jk_refund_release":     {"refund released", "রিফান্ড ফেরত"},
	"jk_adjustment":         {"adjustment", "সমন্বয়"},
	"jk_late_payment":       {"late payment", "বিলম্বিত পেমেন্ট"},
	"exports":               {"Download", "ডাউনলোড"},
	"format":                {"Format", "ফরম্যাট"},
	"export_deposits":       {"Deposits", "জমা"},
	"export_withdrawals":    {"Withdrawals", "উত্তোলন"},
	"export_refunds":        {"Refunds", "রিফান্ড"},
	"export_ledger":         {"Balance movements", "ব্যালান্স লেনদেন"},
	"fe_insufficient":       {"The available balance is smaller than that.", "উপলব্ধ ব্যালান্স এর চেয়ে কম।"},
	"fe_reason":             {"Give a reason of 1 to 500 characters.", "১ থেকে ৫০০ অক্ষরের একটি কারণ লিখুন।"},

	"wallet_add":      {"Add a wallet", "ওয়ালেট যোগ করুন"},
	"wallet_name":     {"Name on the account (shown to payers)", "অ্যাকাউন্টের নাম (প্রেরক দেখবেন)"},
	"operation":       {"How payers pay it", "প্রেরক কীভাবে পাঠাবেন"},
	"operation_hint":  {"Cash Out: an agent wallet; Make Payment: a merchant wallet; Send Money: a personal wallet.", "ক্যাশ আউট: এজেন্ট ওয়ালেট; পেমেন্ট: মার্চেন্ট ওয়ালেট; সেন্ড মানি: পার্সোনাল ওয়ালেট।"},
	"done_wallet_add": {"The wallet is added to the pool.", "ওয়ালেট যোগ হয়েছে।"},
	"fe_phone":        {"Enter the wallet's number: 11 digits starting with 01.", "ওয়ালেটের নম্বর লিখুন: 01 দিয়ে শুরু ১১ অঙ্ক।"},

	"webhook_test":        {"Send a test event", "পরীক্ষামূলক ইভেন্ট পাঠান"},
	"test_answer":         {"The endpoint answered", "এন্ডপয়েন্টের উত্তর"},
	"test_no_answer":      {"no answer:", "উত্তর নেই:"},
	"remove":              {"Remove", "মুছুন"},
	"done_webhook_enable": {"The endpoint is enabled again.", "এন্ডপয়েন্ট আবার চালু।"},
	"done_webhook_remove": {"The endpoint is removed.", "এন্ডপয়েন্ট মুছে ফেলা হয়েছে।"},

	"support":                         {"Questions about this payment", "এই পেমেন্ট নিয়ে প্রশ্ন"},
	"pair":                            {"Pair a phone", "ফোন যুক্ত করুন"},
	"pair_do":                         {"Pair", "যুক্ত করুন"},
	"pair_once":                       {"Scan this with the forwarder app on the phone, or type what is below; the token is shown once.", "ফোনের ফরওয়ার্ডার অ্যাপ দিয়ে এটি স্ক্যান করুন, অথবা নিচের তথ্য লিখুন; টোকেন একবারই দেখানো হবে।"},
	"pair_scan":                       {"The forwarder URL and the phone's token.", "ফরওয়ার্ডার URL ও ফোনের টোকেন।"},
	"forwarder_url":                   {"Forwarder URL", "ফরওয়ার্ডার URL"},
	"device_token":                    {"Token", "টোকেন"},
	"device_name":                     {"A name for the phone (e.g. counter 1, Robi SIM)", "ফোনের একটি নাম (যেমন কাউন্টার ১, রবি সিম)"},
	"device_wallets":                  {"Wallets whose SMS it receives", "যে ওয়ালেটের এসএমএস এতে আসে"},
	"device_no_wallets":               {"Add a wallet first.", "আগে একটি ওয়ালেট যোগ করুন।"},
	"device_signing":                  {"The app signs its posts (SMS Gateway, SmsForwarder)", "অ্যাপ তার পোস্টে স্বাক্ষর করে (SMS Gateway, SmsForwarder)"},
	"org_create_title":                {"Create your organization", "আপনার প্রতিষ্ঠান তৈরি করুন"},
	"org_create_hint":                 {"The shop or business that takes payments. Its API key is shown once, next.", "যে দোকান বা ব্যবসা পেমেন্ট নেয়। এর এপিআই কী এরপর একবারই দেখানো হবে।"},
	"org_create":                      {"Create", "তৈরি করুন"},
	"ev_deposit.succeeded":            {"Deposit paid", "জমা পরিশোধিত"},
	"ev_deposit.failed":               {"Deposit failed", "জমা ব্যর্থ"},
	"ev_deposit.expired":              {"Deposit expired", "জমার মেয়াদ শেষ"},
	"ev_deposit.refunded":             {"Deposit refunded", "জমা ফেরত"},
	"ev_withdraw.created":             {"Withdrawal created", "উত্তোলন তৈরি"},
	"ev_withdraw.succeeded":           {"Withdrawal sent", "উত্তোলন পাঠানো"},
	"ev_withdraw.failed":              {"Withdrawal failed", "উত্তোলন ব্যর্থ"},
	"ev_refund.created":               {"Refund created", "রিফান্ড তৈরি"},
	"ev_refund.succeeded":             {"Refund sent", "রিফান্ড পাঠানো"},
	"ev_refund.failed":                {"Refund failed", "রিফান্ড ব্যর্থ"},
	"t_settings":                      {"Settings", "সেটিংস"},
	"set_payers":                      {"What payers see", "প্রেরক যা দেখবেন"},
	"set_name":                        {"Shop name", "দোকানের নাম"},
	"set_logo":                        {"Logo (an https address of an image)", "লোগো (ছবির https ঠিকানা)"},
	"set_support":                     {"Support contact (phone, email or web address)", "সহায়তার যোগাযোগ (ফোন, ইমেইল বা ওয়েব ঠিকানা)"},
	"set_methods":                     {"Payment methods you take", "যে পেমেন্ট মাধ্যম নেবেন"},
	"set_methods_hint":                {"A method turned off is offered to no payer and refused to the API.", "বন্ধ মাধ্যম কোনো প্রেরককে দেখানো হয় না, এপিআই-তেও নেওয়া হয় না।"},
	"set_windows":                     {"How long a payer has", "প্রেরক কতক্ষণ সময় পাবেন"},
	"set_instructions_window":         {"To send a transaction ID (minutes)", "ট্রানজ্যাকশন আইডি পাঠাতে (মিনিট)"},
	"set_redirect_window":             {"To finish a hosted checkout (minutes)", "হোস্টেড চেকআউট শেষ করতে (মিনিট)"},
	"set_platform":                    {"Set by the platform", "প্ল্যাটফর্ম নির্ধারিত"},
	"set_platform_hint":               {"Only the platform's owner changes these.", "কেবল প্ল্যাটফর্মের মালিক এগুলো বদলাতে পারেন।"},
	"set_deposits_enabled":            {"Deposits", "জমা"},
	"set_h2h_enabled":                 {"Host-to-host deposits", "হোস্ট-টু-হোস্ট জমা"},
	"set_withdrawals_enabled":         {"Withdrawals", "উত্তোলন"},
	"set_deposit_fee_percent":         {"Deposit fee (%)", "জমার ফি (%)"},
	"set_deposit_fee_fixed":           {"Deposit fee (fixed, ৳)", "জমার ফি (নির্দিষ্ট, ৳)"},
	"set_withdraw_commission_percent": {"Withdrawal commission (%)", "উত্তোলনের কমিশন (%)"},
	"set_withdraw_commission_fixed":   {"Withdrawal commission (fixed, ৳)", "উত্তোলনের কমিশন (নির্দিষ্ট, ৳)"},
	"done_settings":                   {"The settings are saved.", "সেটিংস সংরক্ষিত।"},
	"fe_name":                         {"Give a name of 1 to 200 characters.", "১ থেকে ২০০ অক্ষরের একটি নাম দিন।"},
	"fe_logo_url":                     {"Give an https address of the image, or leave it empty.", "ছবির https ঠিকানা দিন, অথবা খালি রাখুন।"},
	"fe_support_contact":              {"Keep the contact to 200 characters of plain text.", "যোগাযোগ ২০০ অক্ষরের সাধারণ লেখায় রাখুন।"},
	"fe_instructions_window":          {"Give whole minutes, from 1 to 10080.", "১ থেকে ১০০৮০ পূর্ণ মিনিট দিন।"},
	"fe_redirect_window":              {"Give whole minutes, from 1 to 10080.", "১ থেকে ১০০৮০ পূর্ণ মিনিট দিন।"},

	// Refused input, beside its field.
	"fe_amount":    {"Enter an amount in taka greater than zero, like 1500 or 1500.50.", "শূন্যের বেশি টাকার পরিমাণ লিখুন, যেমন 1500 বা 1500.50।"},
	"fe_no_method": {"No payment method can take this amount now: change the amount, or add a wallet whose limits take it.", "এই পরিমাণ এখন কোনো পেমেন্ট মাধ্যমে নেওয়া যাবে না: পরিমাণ বদলান, অথবা এমন ওয়ালেট যোগ করুন যার সীমায় এটি পড়ে।"},
	"fe_note":      {"The note is too long or has characters that cannot be shown.", "নোটটি অনেক লম্বা, অথবা এতে দেখানো যায় না এমন অক্ষর আছে।"},
	"fe_other":     {"Check this: %s.", "এটি দেখুন: %s।"},

	// The keys page's bKash card.
	"bkash_api":              {"bKash tokenized checkout API", "বিকাশ টোকেনাইজড চেকআউট API"},
	"bkash_connected":        {"Connected", "সংযুক্ত"},
	"bkash_off":              {"Not connected.", "সংযুক্ত নয়।"},
	"bkash_app_key":          {"App key", "অ্যাপ কী"},
	"bkash_app_secret":       {"App secret", "অ্যাপ সিক্রেট"},
	"bkash_username":         {"Username", "ইউজারনেম"},
	"bkash_password":         {"Password", "পাসওয়ার্ড"},
	"bkash_base_url":         {"Base URL (optional)", "বেস URL (ঐচ্ছিক)"},
	"bkash_base_url_default": {"bKash's production API", "বিকাশের প্রোডাকশন API"},
	"bkash_connect":          {"Connect", "সংযুক্ত করুন"},
	"bkash_disconnect":       {"Disconnect", "বিচ্ছিন্ন করুন"},
	"done_bkash_connect":     {"Connected to bKash's API.", "বিকাশের API-তে সংযুক্ত।"},
	"done_bkash_disconnect":  {"Disconnected from bKash's API.", "বিকাশের API থেকে বিচ্ছিন্ন।"},
}

// translate returns the text of key in lang, formatted with args; an
// unknown key is itself (a test proves every key used exists).
func translate(lang, key string, args ...any) string {
	t, ok := texts[key]
	if !ok {
		return key
	}
	s := t[0]
	if lang == langBangla {
		s = t[1]
	}
	if len(args) > 0 {
		return fmt.Sprintf(s, args...)
	}
	return s
}

// hasText reports whether key is a known text.
func hasText(key string) bool { _, ok := texts[key]; return ok }

var funcs = template.FuncMap{
	// amount is a form's value: plain, never grouped (Money shows one).
	"amount": func(d decimal.Decimal) string { return engine.FormatAmount(d) },
	// url is a URL the console shows: the engine's one redaction.
	"url": engine.RedactURL,
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.In(engine.Dhaka).Format("2006-01-02 15:04")
	},
	"whenp": func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.In(engine.Dhaka).Format("2006-01-02 15:04")
	},
	"nullamount": func(d decimal.NullDecimal) string {
		if !d.Valid {
			return "-"
		}
		return engine.FormatAmount(d.Decimal)
	},
	"str":  func(b []byte) string { return string(b) },
	"dur":  func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"list": func(s ...string) []string { return s },
	"nodash": func(s string) string {
		if s == "-" {
			return ""
		}
		return s
	},
	"statuses": func(any) []string { return depositStatuses },
	// dict passes several values to a template: key, value, ...
	"dict": func(kv ...any) (map[string]any, error) {
		if len(kv)%2 != 0 {
			return nil, fmt.Errorf("dict of %d values", len(kv))
		}
		m := make(map[string]any, len(kv)/2)
		for i := 0; i < len(kv); i += 2 {
			k, ok := kv[i].(string)
			if !ok {
				return nil, fmt.Errorf("dict key %v", kv[i])
			}
			m[k] = kv[i+1]
		}
		return m, nil
	},
}
