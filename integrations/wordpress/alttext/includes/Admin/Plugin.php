<?php

declare(strict_types=1);

namespace Alttext\Admin;

/**
 * Where the admin screens find the plugin's files, and the script registration they share. Paths come
 * from this file's place, so the admin code does not depend on a constant the bootstrap may name otherwise.
 */
final class Plugin
{
    public const TEXT_DOMAIN = 'alttext';

    public static function rootDir(): string
    {
        return dirname(__DIR__, 2);
    }

    public static function mainFile(): string
    {
        return self::rootDir() . '/alttext.php';
    }

    public static function assetUrl(string $file): string
    {
        return plugins_url('assets/' . $file, self::mainFile());
    }

    /** The file's modification time as its version: a changed file is fetched anew, an unchanged one cached. */
    public static function assetVersion(string $file): string
    {
        $path = self::rootDir() . '/assets/' . $file;
        return is_file($path) ? (string) filemtime($path) : '1';
    }

    /**
     * Registers and enqueues one of the plugin's scripts, with its translations (the JSON files
     * `alttext-<locale>-<md5>.json` under languages/, made from the .po like WordPress's own).
     *
     * @param string[] $deps
     */
    public static function enqueueScript(string $handle, string $file, array $deps): void
    {
        wp_enqueue_script($handle, self::assetUrl($file), $deps, self::assetVersion($file), true);
        if (in_array('wp-i18n', $deps, true)) {
            wp_set_script_translations($handle, self::TEXT_DOMAIN, self::rootDir() . '/languages');
        }
    }

    public static function enqueueStyle(): void
    {
        wp_enqueue_style('alttext-admin', self::assetUrl('admin.css'), [], self::assetVersion('admin.css'));
    }
}
