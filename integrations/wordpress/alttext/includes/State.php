<?php

declare(strict_types=1);

namespace Alttext;

/**
 * An attachment's alt-text state: the JSON the REST routes answer (WORDPRESS.md), read from its meta,
 * and the one place that writes the meta.
 */
final class State
{
    /**
     * @return array{attachment_id: int, state: string, suggestion_id: ?string, proposed_alt: ?string,
     *   alt: string, language: ?string, error: ?string, can_decide: bool}
     */
    public static function of(int $attachmentId): array
    {
        $state = (string) get_post_meta($attachmentId, Meta::STATE, true);
        return [
            'attachment_id' => $attachmentId,
            'state' => $state === '' ? 'none' : $state,
            'suggestion_id' => self::textOrNull(get_post_meta($attachmentId, Meta::SUGGESTION_ID, true)),
            'proposed_alt' => self::textOrNull(get_post_meta($attachmentId, Meta::PROPOSED_ALT, true)),
            'alt' => self::alt($attachmentId),
            'language' => self::textOrNull(get_post_meta($attachmentId, Meta::LANGUAGE, true)),
            'error' => self::textOrNull(get_post_meta($attachmentId, Meta::ERROR, true)),
            'can_decide' => current_user_can('edit_others_posts') && $state === 'pending',
        ];
    }

    public static function alt(int $attachmentId): string
    {
        return (string) get_post_meta($attachmentId, Meta::ALT, true);
    }

    public static function state(int $attachmentId): string
    {
        return (string) get_post_meta($attachmentId, Meta::STATE, true);
    }

    /** Sets the state; `error` null clears the notice text. */
    public static function set(int $attachmentId, string $state, ?string $error = null): void
    {
        update_post_meta($attachmentId, Meta::STATE, $state);
        if ($error === null || $error === '') {
            delete_post_meta($attachmentId, Meta::ERROR);
        } else {
            update_post_meta($attachmentId, Meta::ERROR, wp_slash($error));
        }
    }

    /** Writes the alt text as this plugin's (remembered, so an undo can tell it from a person's). */
    public static function writeAlt(int $attachmentId, string $alt): void
    {
        $alt = sanitize_text_field($alt);
        update_post_meta($attachmentId, Meta::ALT, wp_slash($alt));
        update_post_meta($attachmentId, Meta::WRITTEN_ALT, wp_slash($alt));
    }

    /** @param mixed $value */
    private static function textOrNull($value): ?string
    {
        return is_string($value) && $value !== '' ? $value : null;
    }
}
