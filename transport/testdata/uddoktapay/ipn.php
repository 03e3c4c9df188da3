<?php
// The shop's IPN endpoint: keeps what verify-payment said after checking
// the IPN's key.
require __DIR__ . '/client.php';
$client = new UddoktaStyleClient(getenv('SHOP_API_KEY'), getenv('SHOP_API_URL'));
try {
    file_put_contents(getenv('SHOP_OUT') . '/ipn.json', json_encode($client->handleIPN()));
    echo 'OK';
} catch (Exception $e) {
    http_response_code(403);
    file_put_contents(getenv('SHOP_OUT') . '/ipn-refused.txt', $e->getMessage());
}
