<?php

declare(strict_types=1);

namespace Alttext;

/**
 * Talks to the alttext service with wp_remote_request (not wp_safe_remote_*: the service runs on the
 * site's own network more often than not, and an administrator set its address). Images go as bytes in
 * a multipart body, never as a URL the service would have to fetch.
 */
final class Client
{
    public const TIMEOUT_SECONDS = 60;

    public function __construct(private string $baseUrl, private string $apiKey)
    {
        $this->baseUrl = rtrim($baseUrl, '/');
    }

    public static function fromSettings(): self
    {
        if (!Settings::isConfigured()) {
            throw new ServiceError(
                'not_configured',
                __('The alttext service is not set up yet: enter its address and an API key under Settings → Alt text.', 'alttext')
            );
        }
        return new self(Settings::serviceUrl(), Settings::apiKey());
    }

    /**
     * POST /api/suggestions: a pending suggestion in the organisation's queue.
     *
     * @param array{kind: string, ref: string, site: string} $target
     */
    public function suggest(string $bytes, string $filename, string $mime, array $target, string $currentAlt, string $language): array
    {
        return $this->multipart('/api/suggestions', $bytes, $filename, $mime, [
            'target' => (string) wp_json_encode($target),
            'current_alt' => $currentAlt,
            'language' => $language,
        ]);
    }

    /** POST /api/alt-text: alt text for the image, nothing queued. */
    public function altText(string $bytes, string $filename, string $mime, string $language): array
    {
        return $this->multipart('/api/alt-text', $bytes, $filename, $mime, ['language' => $language]);
    }

    public function suggestion(string $id): array
    {
        return $this->request('GET', '/api/suggestions/' . rawurlencode($id));
    }

    /** Pending suggestions of this key's organisation that this key's account made, newest first. */
    public function mySuggestions(int $limit = 50): array
    {
        return $this->request('GET', '/api/suggestions?mine=true&target_kind=wordpress-attachment&limit=' . $limit);
    }

    public function accept(string $id, ?string $altText = null): array
    {
        return $this->request('POST', '/api/suggestions/' . rawurlencode($id) . '/accept', $altText === null ? null : ['alt_text' => $altText]);
    }

    public function reject(string $id, string $reason = ''): array
    {
        return $this->request('POST', '/api/suggestions/' . rawurlencode($id) . '/reject', $reason === '' ? null : ['reason' => $reason]);
    }

    public function usage(): array
    {
        return $this->request('GET', '/api/usage');
    }

    public function validateKey(): array
    {
        return $this->request('POST', '/api/validate-key', ['api_key' => $this->apiKey], false);
    }

    public function ready(): array
    {
        return $this->request('GET', '/ready', null, false);
    }

    private function multipart(string $path, string $bytes, string $filename, string $mime, array $fields): array
    {
        $boundary = 'alttext-' . bin2hex(random_bytes(12));
        $body = '';
        foreach ($fields as $name => $value) {
            $body .= "--{$boundary}\r\nContent-Disposition: form-data; name=\"{$name}\"\r\n\r\n{$value}\r\n";
        }
        $safeName = str_replace(['"', "\r", "\n", '\\'], '_', $filename);
        $body .= "--{$boundary}\r\nContent-Disposition: form-data; name=\"image\"; filename=\"{$safeName}\"\r\n"
            . "Content-Type: {$mime}\r\n\r\n{$bytes}\r\n--{$boundary}--\r\n";
        return $this->send('POST', $path, $body, 'multipart/form-data; boundary=' . $boundary, true);
    }

    private function request(string $method, string $path, ?array $json = null, bool $withKey = true): array
    {
        $body = $json === null ? null : (string) wp_json_encode($json);
        return $this->send($method, $path, $body, $json === null ? null : 'application/json', $withKey);
    }

    private function send(string $method, string $path, ?string $body, ?string $contentType, bool $withKey): array
    {
        $headers = ['Accept' => 'application/json', 'User-Agent' => 'alttext-wordpress/' . VERSION];
        if ($withKey) {
            $headers['X-API-Key'] = $this->apiKey;
        }
        if ($contentType !== null) {
            $headers['Content-Type'] = $contentType;
        }
        $args = ['method' => $method, 'headers' => $headers, 'timeout' => self::TIMEOUT_SECONDS, 'redirection' => 0];
        if ($body !== null) {
            $args['body'] = $body;
        }
        $response = wp_remote_request($this->baseUrl . $path, $args);
        if (is_wp_error($response)) {
            throw new ServiceError('unreachable', sprintf(
                /* translators: 1: the service's address, 2: the error PHP reported */
                __('The alttext service at %1$s could not be reached (%2$s). Check that it runs and that the address under Settings → Alt text is right.', 'alttext'),
                $this->baseUrl,
                $response->get_error_message()
            ));
        }
        $status = (int) wp_remote_retrieve_response_code($response);
        $decoded = json_decode((string) wp_remote_retrieve_body($response), true);
        $data = is_array($decoded) ? $decoded : [];
        if ($status >= 200 && $status < 300) {
            return $data;
        }
        throw self::errorOf($status, $data, $this->baseUrl);
    }

    /** The plain-words error of a service answer that is not 2xx. */
    public static function errorOf(int $status, array $data, string $baseUrl): ServiceError
    {
        $error = $data['error'] ?? null;
        $code = is_array($error) ? (string) ($error['code'] ?? '') : '';
        $said = is_array($error) ? (string) ($error['message'] ?? '') : (is_string($error) ? $error : '');
        if ($status === 401) {
            return new ServiceError('unauthorized', __('The alttext service refused the API key (wrong, revoked or expired). Enter a valid key under Settings → Alt text.', 'alttext'), $status, $code);
        }
        if ($status === 402 || $code === 'quota_exceeded') {
            return new ServiceError('quota', __('The credits of your alttext organisation are used up for this month. Nothing was sent; try again when they renew or ask the operator for more.', 'alttext'), $status, $code);
        }
        if ($status === 429) {
            return new ServiceError('rate_limited', __('The alttext service asked to slow down (too many requests). Try again in a minute.', 'alttext'), $status, $code);
        }
        if ($status === 413 || $code === 'payload_too_large') {
            return new ServiceError('too_large', __('The image is larger than the alttext service accepts (10 MB).', 'alttext'), $status, $code);
        }
        if ($code === 'invalid_image' || $code === 'unsupported_media_type' || $status === 415) {
            /* translators: %s: the service's own explanation */
            return new ServiceError('invalid_image', sprintf(__('The alttext service could not read this image: %s', 'alttext'), $said), $status, $code);
        }
        if ($status === 403) {
            /* translators: %s: the service's own explanation */
            return new ServiceError('forbidden', sprintf(__('The API key may not do this in its organisation: %s', 'alttext'), $said), $status, $code);
        }
        if ($status === 404) {
            return new ServiceError('not_found', __('The alttext service does not know this suggestion (any more).', 'alttext'), $status, $code);
        }
        if ($status === 409) {
            return new ServiceError('conflict', __('This suggestion was decided already.', 'alttext'), $status, $code);
        }
        if ($status >= 300 && $status < 400) {
            /* translators: %s: the service's address */
            return new ServiceError('unreachable', sprintf(__('The alttext service at %s answered with a redirect: check the address under Settings → Alt text.', 'alttext'), $baseUrl), $status, $code);
        }
        return new ServiceError('server', sprintf(
            /* translators: 1: HTTP status, 2: the service's own explanation */
            __('The alttext service answered %1$d: %2$s', 'alttext'),
            $status,
            $said !== '' ? $said : __('no explanation given', 'alttext')
        ), $status, $code);
    }
}
