<?php

declare(strict_types=1);

namespace Alttext\Admin;

/**
 * An attachment's alt-text state as the admin screens show it: the same shape as the REST routes'
 * state JSON (WORDPRESS.md), read from the attachment's meta, so a screen rendered by PHP and one
 * updated from a REST answer show the same thing.
 */
final class AttachmentState
{
    public const META_SUGGESTION_ID = '_alttext_suggestion_id';
    public const META_STATE = '_alttext_state';
    public const META_PROPOSED_ALT = '_alttext_proposed_alt';
    public const META_ERROR = '_alttext_error';
    public const META_LANGUAGE = '_alttext_language';
    public const META_ALT = '_wp_attachment_image_alt';

    /** States an admin notice tells about: something did not happen and a person should know why. */
    public const NOTICE_STATES = ['failed', 'too_large', 'stale'];

    /**
     * @return array{attachment_id: int, state: string, suggestion_id: ?string, proposed_alt: ?string,
     *   alt: string, language: ?string, error: ?string, can_decide: bool}
     */
    public static function of(int $attachmentId): array
    {
        $state = (string) get_post_meta($attachmentId, self::META_STATE, true);
        return [
            'attachment_id' => $attachmentId,
            'state' => $state === '' ? 'none' : $state,
            'suggestion_id' => self::textOrNull(get_post_meta($attachmentId, self::META_SUGGESTION_ID, true)),
            'proposed_alt' => self::textOrNull(get_post_meta($attachmentId, self::META_PROPOSED_ALT, true)),
            'alt' => (string) get_post_meta($attachmentId, self::META_ALT, true),
            'language' => self::textOrNull(get_post_meta($attachmentId, self::META_LANGUAGE, true)),
            'error' => self::textOrNull(get_post_meta($attachmentId, self::META_ERROR, true)),
            'can_decide' => current_user_can('edit_others_posts'),
        ];
    }

    /** What a state means, in the words the screens use. */
    public static function label(string $state): string
    {
        switch ($state) {
            case 'pending':
                return __('Suggestion waiting for review', 'alttext');
            case 'accepted':
                return __('Suggestion accepted', 'alttext');
            case 'edited':
                return __('Suggestion accepted after editing', 'alttext');
            case 'rejected':
                return __('Suggestion rejected', 'alttext');
            case 'stale':
                return __(
                    'Not applied: the alt text was changed in WordPress meanwhile, and that text was kept',
                    'alttext'
                );
            case 'filled':
                return __('Filled in by alttext', 'alttext');
            case 'failed':
                return __('alttext could not describe this image', 'alttext');
            case 'too_large':
                return __('Too large to send to alttext', 'alttext');
            default:
                return __('No suggestion', 'alttext');
        }
    }

    /** @param mixed $value */
    private static function textOrNull($value): ?string
    {
        return is_string($value) && $value !== '' ? $value : null;
    }
}
