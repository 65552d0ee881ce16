// libxml2 for Swift: the SAX2 push parser the web-feed and OPML readers drive, and the HTML 4
// entity table they take named characters from. Nothing variadic is called from Swift: errors
// arrive through the structured error callback.
//
// Debian's libxml2 is built with ICU, so its encoding.h includes the system's <unicode/ucnv.h>,
// whose UErrorCode clashes with the one Foundation's _FoundationICU module defines (a clean
// build fails in any file importing both). feedsync converts encodings with iconv itself and
// never touches xmlCharEncodingHandler's fields (the only declarations that use ICU types, at
// the end of that struct; libxml2 hands it out only by pointer), so the ICU part is left out.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/entities.h>
#include <libxml/HTMLparser.h>
#include <libxml/xmlerror.h>
