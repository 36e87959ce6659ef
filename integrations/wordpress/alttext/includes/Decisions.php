<?php

declare(strict_types=1);

namespace Alttext;

/**
 * Decisions both ways. Deciding in WordPress decides the suggestion in alttext; a decision made in the
 * alttext console (webhook or pull) is applied here. Either way the alt text is written only while it
 * is still what it was when the suggestion was made: a person's later change wins (state `stale`).
 */
final class Decisions
{
    public const STALE_REASON = 'stale: changed in WordPress';

    /** Accepts (or, with another text, edits) the attachment's pending suggestion. */
    public static function accept(int $attachmentId, ?string $altText = null): array|\WP_Error
    {
        $pending = self::pendingSuggestion($attachmentId);
        if ($pending instanceof \WP_Error) {
            return $pending;
        }
        $client = Client::fromSettings();
        if (self::changedByPerson($attachmentId)) {
            self::markStale($attachmentId);
            try {
                $client->reject($pending, self::STALE_REASON);
            } catch (ServiceError $error) {
                // Decided in the console meanwhile, or unreachable: the person's text stays either way.
            }
            return State::of($attachmentId);
        }
        $proposed = (string) get_post_meta($attachmentId, Meta::PROPOSED_ALT, true);
        $text = $altText !== null && trim($altText) !== '' && trim($altText) !== $proposed ? sanitize_text_field($altText) : null;
        try {
            $decided = $client->accept($pending, $text);
        } catch (ServiceError $error) {
            return self::afterRefusal($client, $pending, $error);
        }
        self::apply($decided, (string) ($decided['status'] ?? 'accepted'), (string) ($decided['decided_at'] ?? ''));
        return State::of($attachmentId);
    }

    public static function reject(int $attachmentId, string $reason = ''): array|\WP_Error
    {
        $pending = self::pendingSuggestion($attachmentId);
        if ($pending instanceof \WP_Error) {
            return $pending;
        }
        $client = Client::fromSettings();
        try {
            $decided = $client->reject($pending, sanitize_text_field($reason));
        } catch (ServiceError $error) {
            return self::afterRefusal($client, $pending, $error);
        }
        self::apply($decided, 'rejected', (string) ($decided['decided_at'] ?? ''));
        return State::of($attachmentId);
    }

    /**
     * Applies a decision the service reports (webhook or pull). Returns the attachment it changed, or
     * null when it concerns none of this site's attachments (another site, deleted, superseded, older
     * than the decision already applied).
     */
    public static function apply(array $suggestion, string $decision, string $decidedAt): ?int
    {
        $attachmentId = self::attachmentOf($suggestion);
        if ($attachmentId === null) {
            return null;
        }
        $applied = (string) get_post_meta($attachmentId, Meta::DECIDED_AT, true);
        if ($applied !== '' && $decidedAt !== '' && strcmp($decidedAt, $applied) < 0) {
            return null;
        }
        $state = State::state($attachmentId);
        switch ($decision) {
            case 'accepted':
            case 'edited':
                $final = (string) ($suggestion['final_alt'] ?? '');
                if (in_array($state, ['accepted', 'edited'], true) && State::alt($attachmentId) === $final) {
                    break;
                }
                if ($state !== 'pending' && $state !== 'rejected') {
                    return null;
                }
                if (self::changedByPerson($attachmentId)) {
                    self::markStale($attachmentId);
                    break;
                }
                State::writeAlt($attachmentId, $final);
                State::set($attachmentId, $decision);
                break;
            case 'rejected':
                if ($state === 'pending') {
                    State::set($attachmentId, 'rejected');
                }
                break;
            case 'reopened':
                $written = (string) get_post_meta($attachmentId, Meta::WRITTEN_ALT, true);
                if (in_array($state, ['accepted', 'edited'], true) && State::alt($attachmentId) === $written) {
                    // An undo: what the attachment held before comes back.
                    update_post_meta($attachmentId, Meta::ALT, wp_slash((string) get_post_meta($attachmentId, Meta::ALT_AT_SUGGEST, true)));
                    delete_post_meta($attachmentId, Meta::WRITTEN_ALT);
                } elseif ($state === 'stale') {
                    update_post_meta($attachmentId, Meta::ALT_AT_SUGGEST, wp_slash(State::alt($attachmentId)));
                }
                State::set($attachmentId, 'pending');
                break;
            default:
                return null;
        }
        if ($decidedAt !== '') {
            update_post_meta($attachmentId, Meta::DECIDED_AT, $decidedAt);
        }
        return $attachmentId;
    }

    /** The attachment a suggestion is for, if it still is this site's and still waits for that suggestion. */
    public static function attachmentOf(array $suggestion): ?int
    {
        $target = is_array($suggestion['target'] ?? null) ? $suggestion['target'] : [];
        if (($target['kind'] ?? '') !== 'wordpress-attachment') {
            return null;
        }
        if (untrailingslashit((string) ($target['site'] ?? '')) !== untrailingslashit(home_url())) {
            return null;
        }
        $attachmentId = (int) ($target['ref'] ?? 0);
        $post = $attachmentId > 0 ? get_post($attachmentId) : null;
        if (!$post instanceof \WP_Post || $post->post_type !== 'attachment') {
            return null;
        }
        if ((string) get_post_meta($attachmentId, Meta::SUGGESTION_ID, true) !== (string) ($suggestion['id'] ?? '')) {
            return null;
        }
        return $attachmentId;
    }

    /** Has the alt text changed since the suggestion was made (so a person wrote it)? */
    public static function changedByPerson(int $attachmentId): bool
    {
        return State::alt($attachmentId) !== (string) get_post_meta($attachmentId, Meta::ALT_AT_SUGGEST, true);
    }

    private static function markStale(int $attachmentId): void
    {
        State::set($attachmentId, 'stale', __('The alt text was changed in WordPress before the suggestion was decided; that text was kept and the suggestion was not applied.', 'alttext'));
    }

    private static function pendingSuggestion(int $attachmentId): string|\WP_Error
    {
        $post = get_post($attachmentId);
        if (!$post instanceof \WP_Post || $post->post_type !== 'attachment') {
            return new \WP_Error('alttext_not_found', __('No such attachment.', 'alttext'), ['status' => 404]);
        }
        $id = (string) get_post_meta($attachmentId, Meta::SUGGESTION_ID, true);
        if ($id === '' || State::state($attachmentId) !== 'pending') {
            return new \WP_Error('alttext_not_pending', __('This image has no suggestion waiting for a decision.', 'alttext'), ['status' => 409]);
        }
        return $id;
    }

    /** Decided elsewhere already (409): take that decision. Any other refusal: said in plain words. */
    private static function afterRefusal(Client $client, string $suggestionId, ServiceError $error): array|\WP_Error
    {
        if ($error->kind === 'conflict') {
            try {
                $current = $client->suggestion($suggestionId);
                $attachmentId = self::attachmentOf($current);
                self::apply($current, (string) ($current['status'] ?? ''), (string) ($current['decided_at'] ?? ''));
                if ($attachmentId !== null) {
                    return State::of($attachmentId);
                }
            } catch (ServiceError $ignored) {
                // fall through to the refusal itself
            }
        }
        return new \WP_Error('alttext_service_' . $error->kind, $error->getMessage(), ['status' => $error->kind === 'conflict' ? 409 : 502]);
    }
}
