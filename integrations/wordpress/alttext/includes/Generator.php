<?php

declare(strict_types=1);

namespace Alttext;

/**
 * Sends an attachment's image to the service: in `suggest` mode a pending suggestion in the
 * organisation's queue, in `fill-empty` mode alt text written only while the alt is still empty. A
 * person's alt text is never overwritten, and the upload itself never fails because of the service.
 */
final class Generator
{
    /** The target the service keeps with a suggestion: how a decision finds its attachment again. */
    public static function target(int $attachmentId): array
    {
        return ['kind' => 'wordpress-attachment', 'ref' => (string) $attachmentId, 'site' => home_url()];
    }

    /**
     * The wp_generate_attachment_metadata filter: runs once the sizes exist (so a size can be sent in
     * place of an original that is too large), for new uploads only.
     */
    public static function onMetadata($metadata, $attachmentId, $context = 'create')
    {
        if ($context !== 'create' || !Images::isImage((int) $attachmentId) || !Settings::isConfigured()) {
            return $metadata;
        }
        try {
            self::generate((int) $attachmentId, true, is_array($metadata) ? $metadata : null);
        } catch (\Throwable $error) {
            // The upload must succeed whatever happens here; the reason stays on the attachment.
            State::set((int) $attachmentId, 'failed', $error->getMessage());
        }
        return $metadata;
    }

    /**
     * Generates for one attachment and returns its state; a refusal of the service becomes the state
     * `failed` or `too_large` with its reason. `fromUpload`: an image with alt text is left alone (its alt
     * is a person's). Throws ServiceError('not_configured') only.
     */
    public static function generate(int $attachmentId, bool $fromUpload = false, ?array $metadata = null): array
    {
        try {
            self::send($attachmentId, $fromUpload, $metadata);
        } catch (ServiceError $error) {
            if ($error->kind === 'not_configured') {
                throw $error;
            }
            State::set($attachmentId, $error->kind === 'too_large' ? 'too_large' : 'failed', $error->getMessage());
        }
        return State::of($attachmentId);
    }

    /** As generate, but a refusal of the service is thrown (bulk stops on some); returns the new state. */
    public static function send(int $attachmentId, bool $fromUpload = false, ?array $metadata = null): string
    {
        $client = Client::fromSettings();
        $alt = State::alt($attachmentId);
        $mode = Settings::mode();
        if (trim($alt) !== '' && ($mode === 'fill-empty' || $fromUpload)) {
            return State::state($attachmentId);
        }
        $file = Images::fileToSend($attachmentId, $metadata);
        if (isset($file['too_large'])) {
            State::set($attachmentId, 'too_large', $file['too_large']);
            return 'too_large';
        }
        $bytes = (string) file_get_contents($file['path']);
        $language = Language::forAttachment($attachmentId);
        update_post_meta($attachmentId, Meta::LANGUAGE, $language);
        $ask = fn (string $tag): array => $mode === 'fill-empty'
            ? $client->altText($bytes, $file['name'], $file['mime'], $tag)
            : $client->suggest($bytes, $file['name'], $file['mime'], self::target($attachmentId), $alt, $tag);
        $answer = $ask($language);
        if ($mode === 'fill-empty') {
            self::fill($attachmentId, (string) ($answer['alt_text'] ?? ''));
        } else {
            self::adopt($attachmentId, $answer, $alt);
        }
        return State::state($attachmentId);
    }

    /** Records a suggestion the service made for the attachment (a fresh answer, or one found again). */
    public static function adopt(int $attachmentId, array $suggestion, string $altAtSuggest): void
    {
        update_post_meta($attachmentId, Meta::SUGGESTION_ID, (string) ($suggestion['id'] ?? ''));
        update_post_meta($attachmentId, Meta::PROPOSED_ALT, wp_slash((string) ($suggestion['proposed_alt'] ?? '')));
        update_post_meta($attachmentId, Meta::ALT_AT_SUGGEST, wp_slash($altAtSuggest));
        delete_post_meta($attachmentId, Meta::DECIDED_AT);
        delete_post_meta($attachmentId, Meta::WRITTEN_ALT);
        State::set($attachmentId, 'pending');
    }

    /** fill-empty: writes only if the alt is still empty now (a person may have typed one meanwhile). */
    private static function fill(int $attachmentId, string $altText): void
    {
        if (trim(State::alt($attachmentId)) !== '') {
            State::set($attachmentId, 'stale', __('A person wrote alt text while alttext was working; theirs was kept.', 'alttext'));
            return;
        }
        if (trim($altText) === '') {
            State::set($attachmentId, 'failed', __('The alttext service answered without alt text.', 'alttext'));
            return;
        }
        update_post_meta($attachmentId, Meta::PROPOSED_ALT, wp_slash($altText));
        State::writeAlt($attachmentId, $altText);
        State::set($attachmentId, 'filled');
    }
}
