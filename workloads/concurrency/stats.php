<?php
// mysqlnd's process-wide counters, and the process that holds them. Reading
// them changes none of them.
header('Content-Type: application/json');
echo json_encode(['pid' => getmypid(), 'stats' => mysqli_get_client_stats()]);
