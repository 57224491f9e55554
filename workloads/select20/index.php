<?php
// select20: one prepared SELECT of 20 rows at a random offset, as JSON.
// The connection is persistent: under a threaded SAPI each PHP thread keeps
// one, as the report's FrankenPHP worker does.
$pdo = new PDO(getenv('PP_DB_DSN'), getenv('PP_DB_USER'), getenv('PP_DB_PASSWORD'), [
    PDO::ATTR_PERSISTENT => true,
    PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
]);
$st = $pdo->prepare('SELECT id, title, body, created_at FROM t ORDER BY id LIMIT 20 OFFSET ?');
$st->bindValue(1, random_int(0, 980), PDO::PARAM_INT);
$st->execute();
header('Content-Type: application/json');
echo json_encode($st->fetchAll(PDO::FETCH_ASSOC));
