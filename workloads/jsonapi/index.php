<?php
// jsonapi: an API request as a JSON API serves it: look up the bearer
// token, then a page of 20 posts with their authors, tags and comment counts.
// The connection is persistent: one per PHP thread.
$pdo = new PDO(getenv('PP_DB_DSN'), getenv('PP_DB_USER'), getenv('PP_DB_PASSWORD'), [
    PDO::ATTR_PERSISTENT => true,
    PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
]);
header('Content-Type: application/json');

$auth = $_SERVER['HTTP_AUTHORIZATION'] ?? (getallheaders()['Authorization'] ?? '');
if (!preg_match('/^Bearer (\S+)$/', $auth, $m)) {
    http_response_code(401);
    echo json_encode(['error' => 'no token']);
    return;
}
$st = $pdo->prepare('SELECT u.id, u.name FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token = ? AND t.expires_at > NOW()');
$st->execute([$m[1]]);
$user = $st->fetch(PDO::FETCH_ASSOC);
if ($user === false) {
    http_response_code(401);
    echo json_encode(['error' => 'bad token']);
    return;
}

$page = random_int(0, 49);
$st = $pdo->prepare('SELECT p.id, p.title, p.body, p.created_at, u.id AS author_id, u.name AS author_name
    FROM posts p JOIN users u ON u.id = p.user_id ORDER BY p.created_at DESC, p.id DESC LIMIT 20 OFFSET ?');
$st->bindValue(1, $page * 20, PDO::PARAM_INT);
$st->execute();
$rows = $st->fetchAll(PDO::FETCH_ASSOC);

$ids = array_column($rows, 'id');
$in = implode(',', array_fill(0, count($ids), '?'));
$tags = [];
$st = $pdo->prepare("SELECT pt.post_id, t.name FROM post_tags pt JOIN tags t ON t.id = pt.tag_id WHERE pt.post_id IN ($in) ORDER BY pt.post_id, t.name");
$st->execute($ids);
foreach ($st->fetchAll(PDO::FETCH_ASSOC) as $r) {
    $tags[$r['post_id']][] = $r['name'];
}
$counts = [];
$st = $pdo->prepare("SELECT post_id, COUNT(*) AS n FROM comments WHERE post_id IN ($in) GROUP BY post_id");
$st->execute($ids);
foreach ($st->fetchAll(PDO::FETCH_ASSOC) as $r) {
    $counts[$r['post_id']] = (int) $r['n'];
}

$posts = [];
foreach ($rows as $r) {
    $posts[] = [
        'id' => (int) $r['id'],
        'title' => $r['title'],
        'body' => $r['body'],
        'created_at' => $r['created_at'],
        'author' => ['id' => (int) $r['author_id'], 'name' => $r['author_name']],
        'tags' => $tags[$r['id']] ?? [],
        'comments' => $counts[$r['id']] ?? 0,
    ];
}
echo json_encode(['user' => ['id' => (int) $user['id'], 'name' => $user['name']], 'page' => $page, 'posts' => $posts]);
