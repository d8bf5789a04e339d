from django.db import models

STATUSES = (("new", "New"), ("paid", "Paid"), ("shipped", "Shipped"), ("refunded", "Refunded"))


class Order(models.Model):
    customer = models.CharField(max_length=100)
    email = models.EmailField()
    total = models.DecimalField(max_digits=8, decimal_places=2)
    status = models.CharField(max_length=10, choices=STATUSES, default="new")
    placed = models.DateField()
    gift = models.BooleanField(default=False)
    notes = models.TextField(blank=True)

    def __str__(self) -> str:
        return f"Order {self.pk} for {self.customer}"
