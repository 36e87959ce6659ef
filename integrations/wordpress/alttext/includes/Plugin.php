<?php

declare(strict_types=1);

namespace Alttext;

/** Wires the plugin into WordPress. */
final class Plugin
{
    public static function boot(): void
    {
        add_action('init', [self::class, 'loadTextDomain']);
        add_action('init', [Settings::class, 'register']);
        add_action('rest_api_init', [Settings::class, 'register']);
        add_action('rest_api_init', [Rest::class, 'register']);
        add_filter('wp_generate_attachment_metadata', [Generator::class, 'onMetadata'], 20, 3);
        add_action(Pull::HOOK, [Pull::class, 'run']);
        add_action(Bulk::HOOK, [Bulk::class, 'run']);
        if (defined('WP_CLI') && constant('WP_CLI') && class_exists('\WP_CLI')) {
            \WP_CLI::add_command('alttext', Cli::class);
        }
        if (is_admin()) {
            foreach (['SettingsPage', 'BulkPage', 'Media', 'Notices'] as $screen) {
                $class = __NAMESPACE__ . '\\Admin\\' . $screen;
                if (class_exists($class)) {
                    $class::register();
                }
            }
        }
    }

    public static function loadTextDomain(): void
    {
        load_plugin_textdomain('alttext', false, dirname(plugin_basename(PLUGIN_FILE)) . '/languages');
    }

    public static function activate(): void
    {
        add_option(Settings::MODE, 'suggest');
        if (!wp_next_scheduled(Pull::HOOK)) {
            wp_schedule_event(time() + HOUR_IN_SECONDS, 'hourly', Pull::HOOK);
        }
    }

    public static function deactivate(): void
    {
        wp_clear_scheduled_hook(Pull::HOOK);
        wp_clear_scheduled_hook(Bulk::HOOK);
    }
}
