<?php

declare(strict_types=1);

namespace Alttext;

/**
 * The attachment meta keys the plugin writes (all start with _alttext_, which uninstall.php removes).
 * The alt text itself is WordPress's own _wp_attachment_image_alt.
 */
final class Meta
{
    public const SUGGESTION_ID = '_alttext_suggestion_id';
    /** pending | accepted | edited | rejected | stale | filled | failed | too_large */
    public const STATE = '_alttext_state';
    public const PROPOSED_ALT = '_alttext_proposed_alt';
    /** The alt text the attachment had when the suggestion was made: a change since is a person's. */
    public const ALT_AT_SUGGEST = '_alttext_alt_at_suggest';
    /** Plain words for the admin notice. */
    public const ERROR = '_alttext_error';
    public const LANGUAGE = '_alttext_language';
    /** When the decision now applied was made (ISO 8601): older events that arrive later are ignored. */
    public const DECIDED_AT = '_alttext_decided_at';
    /** The alt text this plugin wrote, so a reopen can restore what was there before. */
    public const WRITTEN_ALT = '_alttext_written_alt';

    public const ALT = '_wp_attachment_image_alt';

    public const STATES = ['pending', 'accepted', 'edited', 'rejected', 'stale', 'filled', 'failed', 'too_large'];

    /** Every key above but WordPress's alt text. */
    public static function ownKeys(): array
    {
        return [
            self::SUGGESTION_ID,
            self::STATE,
            self::PROPOSED_ALT,
            self::ALT_AT_SUGGEST,
            self::ERROR,
            self::LANGUAGE,
            self::DECIDED_AT,
            self::WRITTEN_ALT,
        ];
    }
}
