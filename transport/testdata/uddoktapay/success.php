<?php
// The shop's return page: the invoice_id in the query is verified, never
// trusted.
require __DIR__ . '/client.php';
$client = new UddoktaStyleClient(getenv('SHOP_API_KEY'), getenv('SHOP_API_URL'));
header('Content-Type: application/json');
echo json_encode(['order' => $_GET['order'], 'verified' => $client->verify($_GET['invoice_id'])]);
