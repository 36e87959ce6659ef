<?php

declare(strict_types=1);

namespace Alttext;

/**
 * A call to the alttext service that did not succeed, with plain words for the admin. `kind` is what
 * the plugin does about it: unreachable, unauthorized, quota, rate_limited, too_large, invalid_image,
 * conflict, not_found, forbidden, not_configured, server.
 */
final class ServiceError extends \RuntimeException
{
    public function __construct(
        public string $kind,
        string $message,
        public int $status = 0,
        public string $errorCode = '',
    ) {
        parent::__construct($message);
    }
}
