// libxml2 for Swift: the SAX2 push parser the web-feed and OPML readers drive, and the HTML 4
// entity table they take named characters from. Nothing variadic is called from Swift: errors
// arrive through the structured error callback.
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/entities.h>
#include <libxml/HTMLparser.h>
#include <libxml/xmlerror.h>
