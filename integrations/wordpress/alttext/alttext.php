<?php

/**
 * Plugin Name:       Alt text (alttext)
 * Plugin URI:        https://github.com/alttext/alttext
 * Description:       Alt text for your images from your own alttext service: suggestions to review, or empty alt texts filled.
 * Version:           0.1.0
 * Requires at least: 6.2
 * Requires PHP:      8.0
 * Author:            alttext
 * License:           GPL-2.0-or-later
 * License URI:       https://www.gnu.org/licenses/gpl-2.0.html
 * Text Domain:       alttext
 * Domain Path:       /languages
 */

declare(strict_types=1);

namespace Alttext;

if (!defined('ABSPATH')) {
    exit;
}

const VERSION = '0.1.0';
const PLUGIN_FILE = __FILE__;

// PSR-4: Alttext\Admin\SettingsPage lives in includes/Admin/SettingsPage.php.
spl_autoload_register(static function (string $class): void {
    if (strncmp($class, __NAMESPACE__ . '\\', strlen(__NAMESPACE__) + 1) !== 0) {
        return;
    }
    $relative = str_replace('\\', '/', substr($class, strlen(__NAMESPACE__) + 1));
    $file = __DIR__ . '/includes/' . $relative . '.php';
    if (is_file($file)) {
        require $file;
    }
});

if (class_exists(Plugin::class)) {
    register_activation_hook(__FILE__, [Plugin::class, 'activate']);
    register_deactivation_hook(__FILE__, [Plugin::class, 'deactivate']);
    Plugin::boot();
}
