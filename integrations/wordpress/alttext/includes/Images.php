<?php

declare(strict_types=1);

namespace Alttext;

/**
 * Which file of an attachment goes to the service: the original when the service reads it (JPEG, PNG,
 * GIF, WebP up to 10 MB), else the largest of WordPress's sizes that it reads, else none (too large).
 */
final class Images
{
    public const MAX_BYTES = 10 * 1024 * 1024;
    public const READABLE = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

    public static function isImage(int $attachmentId): bool
    {
        return str_starts_with((string) get_post_mime_type($attachmentId), 'image/');
    }

    /**
     * @return array{path: string, mime: string, name: string}|array{too_large: string}
     */
    public static function fileToSend(int $attachmentId, ?array $metadata = null): array
    {
        $original = (string) get_attached_file($attachmentId);
        $mime = (string) get_post_mime_type($attachmentId);
        if ($original !== '' && is_readable($original) && in_array($mime, self::READABLE, true)) {
            $size = (int) filesize($original);
            if ($size > 0 && $size <= self::MAX_BYTES) {
                return ['path' => $original, 'mime' => $mime, 'name' => wp_basename($original)];
            }
        }
        $metadata = $metadata ?? wp_get_attachment_metadata($attachmentId);
        $best = null;
        $bestArea = 0;
        if (is_array($metadata) && !empty($metadata['sizes']) && is_array($metadata['sizes']) && $original !== '') {
            $dir = dirname($original);
            foreach ($metadata['sizes'] as $size) {
                $path = $dir . '/' . (string) ($size['file'] ?? '');
                $sizeMime = (string) ($size['mime-type'] ?? '');
                $area = (int) ($size['width'] ?? 0) * (int) ($size['height'] ?? 0);
                if (!in_array($sizeMime, self::READABLE, true) || !is_readable($path) || $area <= $bestArea) {
                    continue;
                }
                if ((int) filesize($path) > self::MAX_BYTES) {
                    continue;
                }
                $best = ['path' => $path, 'mime' => $sizeMime, 'name' => wp_basename($path)];
                $bestArea = $area;
            }
        }
        if ($best !== null) {
            return $best;
        }
        return ['too_large' => self::tooLargeMessage($original, $mime)];
    }

    private static function tooLargeMessage(string $path, string $mime): string
    {
        $bytes = $path !== '' && is_readable($path) ? (int) filesize($path) : 0;
        $type = strtoupper((string) preg_replace('#^image/#', '', $mime));
        return sprintf(
            /* translators: 1: file type such as TIFF, 2: file size such as 40 MB */
            __('This %1$s file (%2$s) cannot be sent: alttext reads JPEG, PNG, GIF and WebP images up to 10 MB, and WordPress made no smaller copy of it that would do. Upload a JPEG or PNG version to get alt text for it.', 'alttext'),
            $type !== '' ? $type : __('image', 'alttext'),
            size_format($bytes)
        );
    }
}
