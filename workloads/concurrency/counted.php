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

// The rarer paths, so that more of mysqlnd's counters move in every
// request, each by the same amount: a statement's bound results fetched
// from a stored set, then reset; a long-data parameter; an error answer; a
// multi-query; ping, select_db, change_user; a transaction. Their rows are
// not counted: $extra says each did what it should.
$extra = 0;
$st = $m->prepare('SELECT id, name FROM counted WHERE id <= ? ORDER BY id');
$limit = 10;
$st->bind_param('i', $limit);
$st->execute();
$st->store_result();
$st->bind_result($id, $name);
while ($st->fetch()) {
    $extra++;
}
$st->free_result();
$st->reset();
$st->close();
$st = $m->prepare('SELECT LENGTH(?)');
$blob = null;
$st->bind_param('b', $blob);
$st->send_long_data(0, str_repeat('x', 40000));
$st->send_long_data(0, str_repeat('y', 40000));
$st->execute();
$st->bind_result($len);
$st->fetch();
$st->close();
$extra += $len === 80000 ? 1 : 0;
try {
    $m->query('SELECT no_such_column FROM counted');
} catch (mysqli_sql_exception $e) {
    $extra += $e->getCode() === 1054 ? 1 : 0;
}
$m->multi_query('SELECT 1; SELECT 2, 3; SELECT id FROM counted WHERE id <= 3');
do {
    if ($r = $m->store_result()) {
        $extra += $r->num_rows;
        $r->free();
    }
} while ($m->more_results() && $m->next_result());
$extra += $m->ping() ? 1 : 0;
$extra += $m->select_db($db) ? 1 : 0;
$extra += $m->change_user($user, $password, $db) ? 1 : 0;
// Every column type, in the text protocol and in the binary one.
$r = $m->query('SELECT * FROM typed');
$extra += count($r->fetch_row()) === 21 ? 1 : 0;
$r->free();
$st = $m->prepare('SELECT * FROM typed WHERE id = ?');
$one = 1;
$st->bind_param('i', $one);
$st->execute();
$r = $st->get_result();
$extra += count($r->fetch_row()) === 21 ? 1 : 0;
$r->free();
$st->close();
// A read-only cursor (rows fetched by COM_STMT_FETCH), a statement
// prepared and never executed, and an unbuffered set freed before its end.
$st = $m->stmt_init();
$st->prepare('SELECT id FROM counted ORDER BY id');
$st->attr_set(MYSQLI_STMT_ATTR_CURSOR_TYPE, MYSQLI_CURSOR_TYPE_READ_ONLY);
$st->execute();
$st->bind_result($id);
while ($st->fetch()) {
    $extra += $id === 20 ? 1 : 0;
}
$st->close();
$m->prepare('SELECT name FROM counted WHERE id = 1')->close();
$r = $m->query('SELECT id FROM counted ORDER BY id', MYSQLI_USE_RESULT);
$r->fetch_row();
$r->free();
$m->begin_transaction();
$m->query('SELECT COUNT(*) FROM counted')->free();
$extra += $m->commit() ? 1 : 0;
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
// 10 bound rows, the long data, the error, 1 + 1 + 3 rows of the
// multi-query, ping, select_db, change_user, the two typed rows, the
// cursor's last row, commit.
echo $extra === 24 ? "counted $rows\n" : "rarer paths: $extra of 24 done\n";
