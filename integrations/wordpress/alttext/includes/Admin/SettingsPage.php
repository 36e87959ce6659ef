<?php

declare(strict_types=1);

namespace Alttext\Admin;

/**
 * Settings → Alt text: the service's address, the API key, the mode, the webhook receiver and its
 * secret, and a button that tests the connection. The options are registered (with their sanitize
 * callbacks) by Alttext\Settings; this page only renders them through the Settings API.
 */
final class SettingsPage
{
    /** The page's slug and the Settings API option group (the group Alttext\Settings registers in). */
    public const SLUG = 'alttext';
    public const OPTION_GROUP = 'alttext';

    private static string $hook = '';

    public static function register(): void
    {
        add_action('admin_menu', [self::class, 'addPage']);
        add_action('admin_init', [self::class, 'addFields']);
        add_action('admin_enqueue_scripts', [self::class, 'enqueue']);
    }

    public static function addPage(): void
    {
        $hook = add_options_page(
            __('Alt text settings', 'alttext'),
            __('Alt text', 'alttext'),
            'manage_options',
            self::SLUG,
            [self::class, 'render']
        );
        self::$hook = is_string($hook) ? $hook : '';
    }

    public static function enqueue(string $hook): void
    {
        if ($hook !== self::$hook || self::$hook === '') {
            return;
        }
        Plugin::enqueueStyle();
        Plugin::enqueueScript('alttext-settings', 'settings.js', ['wp-api-fetch', 'wp-i18n', 'wp-a11y']);
    }

    public static function addFields(): void
    {
        add_settings_section(
            'alttext_service',
            __('The alttext service', 'alttext'),
            [self::class, 'renderServiceIntro'],
            self::SLUG
        );
        add_settings_field(
            'alttext_service_url',
            __('Service URL', 'alttext'),
            [self::class, 'renderServiceUrl'],
            self::SLUG,
            'alttext_service',
            ['label_for' => 'alttext_service_url']
        );
        add_settings_field(
            'alttext_api_key',
            __('API key', 'alttext'),
            [self::class, 'renderApiKey'],
            self::SLUG,
            'alttext_service',
            ['label_for' => 'alttext_api_key']
        );
        add_settings_field(
            'alttext_mode',
            __('Mode', 'alttext'),
            [self::class, 'renderMode'],
            self::SLUG,
            'alttext_service'
        );
        add_settings_section(
            'alttext_webhook',
            __('Decisions made in the alttext console', 'alttext'),
            [self::class, 'renderWebhookIntro'],
            self::SLUG
        );
        add_settings_field(
            'alttext_webhook_url',
            __('Webhook receiver URL', 'alttext'),
            [self::class, 'renderWebhookUrl'],
            self::SLUG,
            'alttext_webhook',
            ['label_for' => 'alttext_webhook_url']
        );
        add_settings_field(
            'alttext_webhook_secret',
            __('Signing secret', 'alttext'),
            [self::class, 'renderWebhookSecret'],
            self::SLUG,
            'alttext_webhook',
            ['label_for' => 'alttext_webhook_secret']
        );
    }

    public static function render(): void
    {
        if (!current_user_can('manage_options')) {
            return;
        }
        echo '<div class="wrap alttext-settings">';
        echo '<h1>' . esc_html(get_admin_page_title()) . '</h1>';
        echo '<form action="' . esc_url(admin_url('options.php')) . '" method="post">';
        settings_fields(self::OPTION_GROUP);
        do_settings_sections(self::SLUG);
        submit_button(__('Save the settings', 'alttext'));
        echo '</form>';

        echo '<h2 id="alttext-test-heading">' . esc_html__('Test the connection', 'alttext') . '</h2>';
        echo '<p id="alttext-test-help">'
            . esc_html__(
                'Checks the saved settings: that the service answers and is ready, and that the API key is valid. '
                . 'Save any change first.',
                'alttext'
            )
            . '</p>';
        echo '<p><button type="button" class="button" id="alttext-test-connection" '
            . 'aria-describedby="alttext-test-help">'
            . esc_html__('Test the connection', 'alttext')
            . '</button></p>';
        // Filled by settings.js; a status region so a screen reader reads the result when it arrives.
        echo '<div id="alttext-test-result" class="alttext-test-result" role="status" aria-live="polite"></div>';
        echo '<noscript><p>'
            . esc_html__('The connection test needs JavaScript.', 'alttext')
            . '</p></noscript>';
        echo '</div>';
    }

    public static function renderServiceIntro(): void
    {
        echo '<p>'
            . esc_html__(
                'alttext describes your images. Images are sent to it as files, so it works for a private site too.',
                'alttext'
            )
            . '</p>';
    }

    public static function renderServiceUrl(): void
    {
        printf(
            '<input type="url" class="regular-text code" id="alttext_service_url" name="alttext_service_url" '
            . 'value="%s" placeholder="https://alttext.example.org" aria-describedby="alttext_service_url-help">',
            esc_attr((string) get_option('alttext_service_url', ''))
        );
        echo '<p class="description" id="alttext_service_url-help">'
            . esc_html__('The address of your alttext service, without a path.', 'alttext')
            . '</p>';
    }

    public static function renderApiKey(): void
    {
        if (defined('ALTTEXT_API_KEY') && (string) constant('ALTTEXT_API_KEY') !== '') {
            // The constant wins: an input here would change nothing, so there is none.
            echo '<p id="alttext_api_key" class="alttext-secret-state">'
                . esc_html__('A key is set in wp-config.php (ALTTEXT_API_KEY). It is used, and not shown.', 'alttext')
                . '</p>';
            return;
        }
        self::renderSecretInput(
            'alttext_api_key',
            (string) get_option('alttext_api_key', '') !== '',
            __('A key is set. It is not shown. To replace it, enter a new key.', 'alttext'),
            __('No key is set. Create one in the alttext console, under Keys, and paste it here.', 'alttext'),
            __(
                'You can also set it in wp-config.php: define( \'ALTTEXT_API_KEY\', \'…\' ); '
                . 'it then wins over this field.',
                'alttext'
            )
        );
    }

    public static function renderMode(): void
    {
        $mode = (string) get_option('alttext_mode', 'suggest');
        $choices = [
            'suggest' => [
                __('Suggest (recommended)', 'alttext'),
                __(
                    'Each new image gets a proposed alt text that a person accepts, edits or rejects, '
                    . 'in the media library, the block editor or the alttext console.',
                    'alttext'
                ),
            ],
            'fill-empty' => [
                __('Fill empty alt text', 'alttext'),
                __(
                    'Each new image without alt text gets one written straight away, without review.',
                    'alttext'
                ),
            ],
        ];
        echo '<fieldset><legend class="screen-reader-text">' . esc_html__('Mode', 'alttext') . '</legend>';
        foreach ($choices as $value => [$label, $help]) {
            $id = 'alttext_mode_' . str_replace('-', '_', $value);
            printf(
                '<p><input type="radio" id="%1$s" name="alttext_mode" value="%2$s" aria-describedby="%1$s-help"%3$s> '
                . '<label for="%1$s">%4$s</label></p>'
                . '<p class="description alttext-choice-help" id="%1$s-help">%5$s</p>',
                esc_attr($id),
                esc_attr($value),
                checked($mode, $value, false),
                esc_html($label),
                esc_html($help)
            );
        }
        echo '<p class="description">'
            . esc_html__('In either mode, alt text a person wrote is never overwritten.', 'alttext')
            . '</p></fieldset>';
    }

    public static function renderWebhookIntro(): void
    {
        echo '<p>'
            . esc_html__(
                'So that a suggestion accepted or rejected in the alttext console reaches WordPress at once, '
                . 'add a webhook to your organisation in the console: paste the URL below, choose the event '
                . 'suggestion.decided, and paste the signing secret it shows (whsec_…) here. '
                . 'Without it, WordPress checks for decisions once an hour.',
                'alttext'
            )
            . '</p>';
    }

    public static function renderWebhookUrl(): void
    {
        printf(
            '<input type="url" class="large-text code" id="alttext_webhook_url" value="%s" readonly '
            . 'aria-describedby="alttext_webhook_url-help">',
            esc_attr(rest_url('alttext/v1/webhook'))
        );
        echo '<p class="description" id="alttext_webhook_url-help">'
            . esc_html__('Read only: copy it into the console.', 'alttext')
            . '</p>';
    }

    public static function renderWebhookSecret(): void
    {
        self::renderSecretInput(
            'alttext_webhook_secret',
            (string) get_option('alttext_webhook_secret', '') !== '',
            __('A signing secret is set. It is not shown. To replace it, enter a new one.', 'alttext'),
            __('No signing secret is set: webhooks from alttext are refused until one is.', 'alttext'),
            ''
        );
    }

    /**
     * A secret's field: whether one is set, in words, and an empty input to replace it. The saved value
     * is never printed into the page; an empty input leaves it as it is (the sanitize callback keeps it).
     */
    private static function renderSecretInput(
        string $name,
        bool $isSet,
        string $setText,
        string $unsetText,
        string $extra
    ): void {
        printf(
            '<p class="alttext-secret-state" id="%1$s-state">%2$s</p>'
            . '<input type="password" class="regular-text code" id="%1$s" name="%1$s" value="" '
            . 'autocomplete="off" spellcheck="false" aria-describedby="%1$s-state%3$s">',
            esc_attr($name),
            esc_html($isSet ? $setText : $unsetText),
            $extra === '' ? '' : ' ' . esc_attr($name) . '-help'
        );
        if ($extra !== '') {
            printf('<p class="description" id="%s-help">%s</p>', esc_attr($name), esc_html($extra));
        }
    }
}
