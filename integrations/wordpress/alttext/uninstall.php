<?php

/**
 * Removes everything the plugin stored: its options, every _alttext_* attachment meta, the signatures
 * the webhook remembered, and its cron events. The alt texts written stay: they are the site's.
 */

declare(strict_types=1);

if (!defined('WP_UNINSTALL_PLUGIN')) {
    exit;
}

require_once __DIR__ . '/includes/Meta.php';
require_once __DIR__ . '/includes/Settings.php';

global $wpdb;

foreach (Alttext\Settings::OPTIONS as $alttextOption) {
    delete_option($alttextOption);
}
$wpdb->query($wpdb->prepare(
    "DELETE FROM {$wpdb->options} WHERE option_name LIKE %s",
    $wpdb->esc_like('alttext_seen_') . '%'
));
$wpdb->query($wpdb->prepare(
    "DELETE FROM {$wpdb->postmeta} WHERE meta_key LIKE %s",
    $wpdb->esc_like('_alttext_') . '%'
));
wp_cache_flush();
wp_clear_scheduled_hook('alttext_pull');
wp_clear_scheduled_hook('alttext_bulk_run');
if (function_exists('as_unschedule_all_actions')) {
    as_unschedule_all_actions('alttext_bulk_run');
}
