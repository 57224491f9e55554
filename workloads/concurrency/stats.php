<?php
// mysqlnd's process-wide counters, the process that holds them, and the
// CPUs it may run on (on one, a plain += cannot lose an update). Reading
// them changes none of them.
header('Content-Type: application/json');
$cpus = '';
$status = @file_get_contents('/proc/self/status');
if ($status !== false && preg_match('/^Cpus_allowed_list:\s*(\S+)/m', $status, $m)) {
    $cpus = $m[1];
}
echo json_encode(['pid' => getmypid(), 'cpus' => $cpus, 'stats' => mysqli_get_client_stats()]);
