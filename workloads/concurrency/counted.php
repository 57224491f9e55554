<?php
// One fixed unit of mysqlnd work: the same queries on the same 20 rows every
// time, over connections of its own (no persistent connection), so that every
// counter mysqlnd keeps moves by the same amount in every request, whichever
// PHP thread serves it.
$socket = getenv('PP_DB_SOCKET');
$user = getenv('PP_DB_USER');
$password = getenv('PP_DB_PASSWORD');
$db = getenv('PP_DB_NAME');
$rows = 0;

mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
$m = new mysqli('localhost', $user, $password, $db, 0, $socket);
// A prepared statement (binary protocol), buffered.
$st = $m->prepare('SELECT id, name, payload FROM counted WHERE id <= ? ORDER BY id');
$limit = 20;
$st->bind_param('i', $limit);
$st->execute();
$res = $st->get_result();
while ($res->fetch_row()) {
    $rows++;
}
$res->free();
$st->close();
// A plain query (text protocol), unbuffered.
$res = $m->query('SELECT id, name, payload FROM counted ORDER BY id', MYSQLI_USE_RESULT);
while ($res->fetch_row()) {
    $rows++;
}
$res->free();
$m->close();

// PDO with server-side prepared statements.
$pdo = new PDO("mysql:unix_socket=$socket;dbname=$db", $user, $password, [
    PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
    PDO::ATTR_EMULATE_PREPARES => false,
]);
$st = $pdo->prepare('SELECT id, name, payload FROM counted WHERE id <= ? ORDER BY id');
$st->execute([20]);
$rows += count($st->fetchAll(PDO::FETCH_NUM));
$st = null;
$pdo = null;

header('Content-Type: text/plain');
echo "counted $rows\n";
