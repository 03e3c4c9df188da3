<?php
// A client of the UddoktaPay checkout API written the way merchant
// plugins call it (cURL, JSON bodies, the key in RT-UDDOKTAPAY-API-KEY, a
// base URL cut back to ".../api"), for payd's compatibility test. Run from
// the command line it performs one step and prints JSON.

class UddoktaStyleClient
{
    private $key;
    private $base;

    public function __construct($key, $baseURL)
    {
        $this->key = $key;
        // Plugins are given ".../api", ".../api/" or ".../api/checkout-v2"
        // and keep everything up to the first "/api".
        $url = rtrim($baseURL, '/');
        $at = strpos($url, '/api');
        if ($at !== false) {
            $url = substr($url, 0, $at + 4);
        }
        $this->base = $url;
    }

    private function call($endpoint, $body)
    {
        $ch = curl_init($this->base . '/' . $endpoint);
        curl_setopt_array($ch, [
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_TIMEOUT => 30,
            CURLOPT_CUSTOMREQUEST => 'POST',
            CURLOPT_POSTFIELDS => json_encode($body),
            CURLOPT_HTTPHEADER => [
                'RT-UDDOKTAPAY-API-KEY: ' . $this->key,
                'accept: application/json',
                'content-type: application/json',
            ],
        ]);
        $raw = curl_exec($ch);
        $err = curl_error($ch);
        curl_close($ch);
        if ($err) {
            throw new Exception('cURL: ' . $err);
        }
        return json_decode($raw, true);
    }

    public function createPayment($data)
    {
        $res = $this->call('checkout-v2', $data);
        if (!isset($res['payment_url'])) {
            throw new Exception(isset($res['message']) ? $res['message'] : 'no payment_url');
        }
        return $res['payment_url'];
    }

    public function verify($invoiceId)
    {
        return $this->call('verify-payment', ['invoice_id' => $invoiceId]);
    }

    // The IPN handler: the header must be the merchant's own key, then the
    // invoice is verified rather than the posted body trusted.
    public function handleIPN()
    {
        $header = isset($_SERVER['HTTP_RT_UDDOKTAPAY_API_KEY']) ? $_SERVER['HTTP_RT_UDDOKTAPAY_API_KEY'] : null;
        if ($header === null || $header !== trim($this->key)) {
            throw new Exception('unauthorized IPN');
        }
        $raw = trim(file_get_contents('php://input'));
        if ($raw === '') {
            throw new Exception('empty IPN');
        }
        $posted = json_decode($raw, true);
        return $this->verify($posted['invoice_id']);
    }
}

if (PHP_SAPI === 'cli' && isset($argv) && realpath($argv[0]) === __FILE__) {
    list(, $step, $key, $base) = $argv;
    $client = new UddoktaStyleClient($key, $base);
    try {
        switch ($step) {
            case 'create':
                // argv[4] is the amount as PHP holds it: "int:150",
                // "float:10.001" or "string:1500.00" (WooCommerce's total).
                list($type, $value) = explode(':', $argv[4], 2);
                $amount = $type === 'int' ? (int)$value : ($type === 'float' ? (float)$value : $value);
                $shop = $argv[5];
                $url = $client->createPayment([
                    'full_name' => 'Rahim Uddin',
                    'email' => 'rahim@example.com',
                    'amount' => $amount,
                    'metadata' => ['order_id' => 42, 'customer' => 'রহিম'],
                    'redirect_url' => $shop . '/success.php?order=42',
                    'return_type' => 'GET',
                    'cancel_url' => $shop . '/cancel.php',
                    'webhook_url' => $shop . '/ipn.php',
                ]);
                echo json_encode(['payment_url' => $url]);
                break;
            case 'verify':
                echo json_encode($client->verify($argv[4]));
                break;
        }
    } catch (Exception $e) {
        echo json_encode(['error' => $e->getMessage()]);
    }
}
