package transport

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The hosted checkout speaks English and Bangla. Amounts, phone numbers
// and transaction IDs stay in ASCII digits in both, as wallet apps and
// their confirmation messages show them, so a payer can compare them
// character by character.
const (
	langEnglish = "en"
	langBangla  = "bn"
)

// checkoutText holds each message of the page by language. Values are
// fmt formats; Bangla ones use indexed verbs where the word order differs.
var checkoutText = map[string]map[string]string{
	langEnglish: {
		"lang_name":            "English",
		"title":                "Pay %s BDT",
		"not_found_title":      "Checkout not found",
		"not_found":            "This checkout does not exist. Check the link the merchant gave you.",
		"amount_label":         "Amount to pay",
		"reference":            "Order",
		"support":              "Questions about this payment",
		"status":               "Status",
		"error_code":           "Code",
		"time_left":            "Time left",
		"pay_before":           "Pay before %s (Dhaka time).",
		"recipient":            "%s to this number",
		"exact_amount":         "Send exactly %s BDT: a payment of any other amount cannot be accepted.",
		"qr_caption":           "Or scan this code with your %s app.",
		"step1":                "Open your %s app and choose %s.",
		"step2":                "Send exactly %s BDT to %s.",
		"step3":                "Enter the transaction ID (TrxID) from the confirmation message below.",
		"step3_payer":          "Enter the number you sent from and the transaction ID (TrxID) from the confirmation message below.",
		"payer_label":          "Your %s number",
		"payer_hint":           "The number you sent the money from: 01XXXXXXXXX.",
		"txid_label":           "Transaction ID",
		"txid_hint":            "3 to 64 characters, as your wallet's confirmation message shows it.",
		"submit":               "Verify payment",
		"attempts_left":        "%d of %d attempts left.",
		"last_failure":         "Your last transaction ID could not be verified: %s.",
		"sandbox_title":        "Sandbox: play the payer",
		"sandbox_instructions": "Make the %s payment the payer's wallet would make. Its transaction ID is then filled in above.",
		"sandbox_redirect":     "Pay as the payer would in the %s checkout.",
		"sandbox_send":         "Send %s BDT from the sandbox wallet",
		"sandbox_fail":         "Simulate a failed payment",
		"sandbox_recorded":     "Sandbox payment recorded. Its transaction ID is %s: submit it to verify the payment.",
		"sandbox_badge":        "Sandbox: no real money moves",
		"payer_phone":          "Payer phone",
		"paid_amount":          "Amount sent",
		"pay":                  "Pay %s BDT",
		"cancel":               "Cancel payment",
		"redirect_wait":        "Complete the payment in the %s checkout.",
		"verifying":            "We are verifying your payment. This page updates by itself.",
		"paid_txid":            "Transaction ID: %s",
		"return":               "Return to the merchant",
		"footer":               "Secure checkout by payd",
		"out_succeeded":        "Payment received. Thank you!",
		"out_failed":           "The payment could not be verified.",
		"out_cancelled":        "You cancelled this payment.",
		"out_expired":          "This checkout has expired.",
		"out_closed":           "This payment is closed.",

		"st_pending":    "Waiting for payment",
		"st_processing": "Verifying",
		"st_succeeded":  "Paid",
		"st_failed":     "Failed",
		"st_cancelled":  "Cancelled",
		"st_expired":    "Expired",
		"st_rejected":   "Rejected",
		"st_refunded":   "Refunded",

		"op_cash_out":     "Cash Out",
		"op_make_payment": "Make Payment",
		"op_send_money":   "Send Money",

		"fc_transaction_not_found":  "no payment with this transaction ID was found",
		"fc_channel_mismatch":       "the payment was made with another service or of another type",
		"fc_recipient_mismatch":     "the payment went to another number",
		"fc_payer_mismatch":         "the payment was made from another number than the one given to the merchant",
		"fc_payer_mismatch_typed":   "the payment was made from another number than the one you entered",
		"fc_amount_mismatch":        "the amount paid is not exactly the amount due",
		"fc_payment_not_completed":  "the payment was not completed",
		"fc_outside_payment_window": "the payment was made outside the payment window",
		"fc_transaction_id_used":    "the transaction ID was already used",
		"fc_provider_unavailable":   "the wallet service could not be reached",

		"err_attempt_in_progress":      "Another transaction ID is being verified. Wait for its result before you send a new one.",
		"err_transaction_id_used":      "This transaction ID has already been used for another payment. Check the ID in your confirmation message.",
		"err_attempt_limit_reached":    "All %d attempts for this payment have been used: no more transaction IDs can be accepted.",
		"err_deposit_terminal":         "This payment is closed (finished, or its time ran out) and accepts no more changes.",
		"err_invalid_txid":             "Enter the transaction ID exactly as your wallet shows it: 3 to 64 letters and digits.",
		"err_invalid_request":          "Check what you entered and try again.",
		"err_payer_phone":              "Enter the number you pay from: 11 digits starting with 01, like 01712345678.",
		"err_amount":                   "Enter the amount you sent, like 500 or 500.50.",
		"err_verification_unavailable": "Verification could not start right now. Submit the same transaction ID again in a moment.",
		"err_other":                    "This could not be done right now. Try again in a moment.",
	},
	langBangla: {
		"lang_name":            "বাংলা",
		"title":                "%s টাকা পরিশোধ করুন",
		"not_found_title":      "চেকআউট পাওয়া যায়নি",
		"not_found":            "এই চেকআউটটি নেই। বিক্রেতার দেওয়া লিংকটি আবার দেখুন।",
		"amount_label":         "পরিশোধের পরিমাণ",
		"reference":            "অর্ডার",
		"support":              "এই পেমেন্ট নিয়ে প্রশ্ন",
		"status":               "অবস্থা",
		"error_code":           "কোড",
		"time_left":            "বাকি সময়",
		"pay_before":           "%s-এর মধ্যে পরিশোধ করুন (ঢাকা সময়)।",
		"recipient":            "এই নম্বরে %s করুন",
		"exact_amount":         "ঠিক %s টাকা পাঠান: অন্য কোনো পরিমাণের পেমেন্ট গ্রহণ করা যাবে না।",
		"qr_caption":           "অথবা আপনার %s অ্যাপ দিয়ে এই কোডটি স্ক্যান করুন।",
		"step1":                "আপনার %s অ্যাপ খুলে %s বেছে নিন।",
		"step2":                "%[2]s নম্বরে ঠিক %[1]s টাকা পাঠান।",
		"step3":                "নিশ্চিতকরণ বার্তার ট্রানজ্যাকশন আইডি (TrxID) নিচে লিখুন।",
		"step3_payer":          "যে নম্বর থেকে পাঠিয়েছেন সেটি এবং নিশ্চিতকরণ বার্তার ট্রানজ্যাকশন আইডি (TrxID) নিচে লিখুন।",
		"payer_label":          "আপনার %s নম্বর",
		"payer_hint":           "যে নম্বর থেকে টাকা পাঠিয়েছেন: 01XXXXXXXXX।",
		"txid_label":           "ট্রানজ্যাকশন আইডি",
		"txid_hint":            "আপনার ওয়ালেটের নিশ্চিতকরণ বার্তায় যেমন আছে, ৩ থেকে ৬৪ অক্ষর।",
		"submit":               "পেমেন্ট যাচাই করুন",
		"attempts_left":        "%[2]d বারের মধ্যে %[1]d বার চেষ্টা বাকি।",
		"last_failure":         "আপনার শেষ ট্রানজ্যাকশন আইডি যাচাই করা যায়নি: %s।",
		"sandbox_title":        "স্যান্ডবক্স: প্রদানকারীর ভূমিকায়",
		"sandbox_instructions": "প্রদানকারীর ওয়ালেট যে %s পেমেন্ট করত, সেটি করুন। এর ট্রানজ্যাকশন আইডি উপরে বসে যাবে।",
		"sandbox_redirect":     "%s চেকআউটে প্রদানকারী যেভাবে পরিশোধ করতেন, সেভাবে করুন।",
		"sandbox_send":         "স্যান্ডবক্স ওয়ালেট থেকে %s টাকা পাঠান",
		"sandbox_fail":         "ব্যর্থ পেমেন্টের অনুকরণ করুন",
		"sandbox_recorded":     "স্যান্ডবক্স পেমেন্ট রেকর্ড হয়েছে। এর ট্রানজ্যাকশন আইডি %s: পেমেন্ট যাচাই করতে এটি জমা দিন।",
		"sandbox_badge":        "স্যান্ডবক্স: আসল টাকা লেনদেন হয় না",
		"payer_phone":          "প্রদানকারীর ফোন নম্বর",
		"paid_amount":          "পাঠানো পরিমাণ",
		"pay":                  "%s টাকা পরিশোধ করুন",
		"cancel":               "পেমেন্ট বাতিল করুন",
		"redirect_wait":        "%s চেকআউটে পেমেন্ট সম্পন্ন করুন।",
		"verifying":            "আপনার পেমেন্ট যাচাই করা হচ্ছে। এই পাতাটি নিজে থেকেই হালনাগাদ হবে।",
		"paid_txid":            "ট্রানজ্যাকশন আইডি: %s",
		"return":               "বিক্রেতার কাছে ফিরে যান",
		"footer":               "payd-এর নিরাপদ চেকআউট",
		"out_succeeded":        "পেমেন্ট পাওয়া গেছে। ধন্যবাদ!",
		"out_failed":           "পেমেন্ট যাচাই করা যায়নি।",
		"out_cancelled":        "আপনি এই পেমেন্ট বাতিল করেছেন।",
		"out_expired":          "এই চেকআউটের মেয়াদ শেষ হয়ে গেছে।",
		"out_closed":           "এই পেমেন্ট বন্ধ হয়ে গেছে।",

		"st_pending":    "পেমেন্টের অপেক্ষায়",
		"st_processing": "যাচাই চলছে",
		"st_succeeded":  "পরিশোধিত",
		"st_failed":     "ব্যর্থ",
		"st_cancelled":  "বাতিল",
		"st_expired":    "মেয়াদোত্তীর্ণ",
		"st_rejected":   "প্রত্যাখ্যাত",
		"st_refunded":   "ফেরত দেওয়া হয়েছে",

		"op_cash_out":     "ক্যাশ আউট",
		"op_make_payment": "পেমেন্ট",
		"op_send_money":   "সেন্ড মানি",

		"fc_transaction_not_found":  "এই ট্রানজ্যাকশন আইডির কোনো পেমেন্ট পাওয়া যায়নি",
		"fc_channel_mismatch":       "পেমেন্টটি অন্য সেবা বা অন্য ধরনে করা হয়েছে",
		"fc_recipient_mismatch":     "পেমেন্টটি অন্য নম্বরে গেছে",
		"fc_payer_mismatch":         "বিক্রেতাকে দেওয়া নম্বর ছাড়া অন্য নম্বর থেকে পেমেন্ট করা হয়েছে",
		"fc_payer_mismatch_typed":   "আপনার দেওয়া নম্বর ছাড়া অন্য নম্বর থেকে পেমেন্ট করা হয়েছে",
		"fc_amount_mismatch":        "পরিশোধিত পরিমাণ পাওনা পরিমাণের সমান নয়",
		"fc_payment_not_completed":  "পেমেন্টটি সম্পন্ন হয়নি",
		"fc_outside_payment_window": "পেমেন্টটি নির্ধারিত সময়ের বাইরে করা হয়েছে",
		"fc_transaction_id_used":    "ট্রানজ্যাকশন আইডিটি আগেই ব্যবহার হয়েছে",
		"fc_provider_unavailable":   "ওয়ালেট সেবার সাথে যোগাযোগ করা যায়নি",

		"err_attempt_in_progress":      "আরেকটি ট্রানজ্যাকশন আইডি যাচাই করা হচ্ছে। নতুন আইডি পাঠানোর আগে তার ফলাফলের জন্য অপেক্ষা করুন।",
		"err_transaction_id_used":      "এই ট্রানজ্যাকশন আইডি আগেই অন্য একটি পেমেন্টে ব্যবহার হয়েছে। নিশ্চিতকরণ বার্তায় আইডিটি মিলিয়ে দেখুন।",
		"err_attempt_limit_reached":    "এই পেমেন্টের %d বার চেষ্টার সবগুলো শেষ: আর কোনো ট্রানজ্যাকশন আইডি গ্রহণ করা যাবে না।",
		"err_deposit_terminal":         "এই পেমেন্ট বন্ধ হয়ে গেছে (সম্পন্ন, অথবা সময় শেষ): আর কোনো পরিবর্তন গ্রহণ করা যাবে না।",
		"err_invalid_txid":             "ওয়ালেটে যেভাবে দেখাচ্ছে ঠিক সেভাবে ট্রানজ্যাকশন আইডি লিখুন: ৩ থেকে ৬৪টি অক্ষর ও সংখ্যা।",
		"err_invalid_request":          "আপনার দেওয়া তথ্য দেখে আবার চেষ্টা করুন।",
		"err_payer_phone":              "যে নম্বর থেকে পরিশোধ করছেন সেটি লিখুন: 01 দিয়ে শুরু ১১ অঙ্ক, যেমন 01712345678।",
		"err_amount":                   "যে পরিমাণ পাঠিয়েছেন তা লিখুন, যেমন 500 বা 500.50।",
		"err_verification_unavailable": "এই মুহূর্তে যাচাই শুরু করা যায়নি। একটু পরে একই ট্রানজ্যাকশন আইডি আবার জমা দিন।",
		"err_other":                    "এই মুহূর্তে এটি করা যায়নি। একটু পরে আবার চেষ্টা করুন।",
	},
}

// channelNames are the wallets' own names for themselves.
var channelNames = map[string]map[string]string{
	langEnglish: {"bkash": "bKash", "nagad": "Nagad", "upay": "Upay", "upi": "UPI", "bank": "Bank", "bangla_qr": "Bangla QR", "rocket": "Rocket"},
	langBangla:  {"bkash": "বিকাশ", "nagad": "নগদ", "upay": "উপায়", "upi": "UPI", "bank": "ব্যাংক", "bangla_qr": "বাংলা কিউআর", "rocket": "রকেট"},
}

// translate formats the message key in lang, falling back to English and
// then to the key itself, so a missing text is visible but never fatal.
func translate(lang, key string, args ...any) string {
	f, ok := checkoutText[lang][key]
	if !ok {
		if f, ok = checkoutText[langEnglish][key]; !ok {
			return key
		}
	}
	if len(args) == 0 {
		return f
	}
	return fmt.Sprintf(f, args...)
}

// checkoutLanguage is ?lang= when it names a language of the page, else
// the one Accept-Language prefers (by q, then by order), else English.
func checkoutLanguage(r *http.Request) string {
	switch l := r.URL.Query().Get("lang"); l {
	case langEnglish, langBangla:
		return l
	}
	best, bestQ := langEnglish, -1.0
	for part := range strings.SplitSeq(r.Header.Get("Accept-Language"), ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		tag = strings.ToLower(strings.TrimSpace(tag))
		base, _, _ := strings.Cut(tag, "-")
		if base != langEnglish && base != langBangla {
			continue
		}
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			var err error
			if q, err = strconv.ParseFloat(v, 64); err != nil {
				continue
			}
		}
		if q > bestQ && q > 0 {
			best, bestQ = base, q
		}
	}
	return best
}
