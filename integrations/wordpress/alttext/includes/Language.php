<?php

declare(strict_types=1);

namespace Alttext;

/**
 * The language of an attachment as a BCP 47 tag: WPML's or Polylang's language of the attachment when
 * one of them runs, else the site's locale.
 */
final class Language
{
    /** Chinese by script rather than by region: the script is what the reader needs. */
    private const SCRIPTS = ['zh_CN' => 'zh-Hans', 'zh_SG' => 'zh-Hans', 'zh_TW' => 'zh-Hant', 'zh_HK' => 'zh-Hant'];

    public static function forAttachment(int $attachmentId): string
    {
        $details = apply_filters('wpml_post_language_details', null, $attachmentId);
        if (is_array($details) && !empty($details['locale'])) {
            return self::fromLocale((string) $details['locale']);
        }
        if (function_exists('pll_get_post_language')) {
            $locale = pll_get_post_language($attachmentId, 'locale');
            if (is_string($locale) && $locale !== '') {
                return self::fromLocale($locale);
            }
        }
        return self::fromLocale((string) get_locale());
    }

    /**
     * The whole locale as a BCP 47 tag, which the service takes as it is: de_DE → de-DE, pt_BR → pt-BR,
     * en_US → en-US, zh_TW → zh-Hant. WordPress's own suffixes (de_DE_formal, pt_PT_ao90) are no BCP 47
     * subtags and are left out.
     */
    public static function fromLocale(string $locale): string
    {
        $locale = str_replace('-', '_', trim($locale));
        if ($locale === '') {
            return 'en';
        }
        $parts = explode('_', $locale);
        $language = strtolower($parts[0]);
        if (!preg_match('/^[a-z]{2,3}$/', $language)) {
            return 'en';
        }
        $region = isset($parts[1]) && preg_match('/^(?:[A-Za-z]{2}|[0-9]{3})$/', $parts[1]) ? strtoupper($parts[1]) : '';
        $base = $language . ($region !== '' ? '_' . $region : '');
        if (isset(self::SCRIPTS[$base])) {
            return self::SCRIPTS[$base];
        }
        if ($language === 'zh') {
            return 'zh-Hans';
        }
        return $region !== '' ? $language . '-' . $region : $language;
    }
}
